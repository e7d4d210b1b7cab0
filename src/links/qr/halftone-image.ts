// The picture of a halftone QR code: a `data:image/…;base64,` URI or an http(s)
// URL fetched through the outbound guard (public addresses only, bounded in
// time and size, no redirects). Either way it must be a PNG, JPEG, GIF or WebP
// by its own bytes, within the size cap. Returned as a data URI to embed.
import { ApiError } from '../../platform/http/errors.ts';
import { fetchPublic, OutboundError, type OutboundOptions } from '../../platform/http/outbound.ts';

function sniff(bytes: Buffer): string | undefined {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.subarray(0, 4).toString('latin1') === 'GIF8') return 'image/gif';
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return undefined;
}

const fail = (code: string, message: string) => new ApiError(400, code, message, [{ path: '/style/halftone/image', message }]);

export async function loadHalftoneImage(source: string, options: OutboundOptions): Promise<string> {
  let bytes: Buffer;
  const data = /^data:image\/(png|jpeg|gif|webp);base64,([A-Za-z0-9+/]+={0,2})$/.exec(source);
  if (data) {
    bytes = Buffer.from(data[2]!, 'base64');
    if (bytes.length > options.maxBytes) throw fail('invalid_image', `The image is larger than ${options.maxBytes} bytes.`);
  } else if (/^https?:\/\//i.test(source)) {
    try {
      ({ bytes } = await fetchPublic(source, options));
    } catch (err) {
      if (err instanceof OutboundError && err.reason === 'address_refused') throw fail('image_address_refused', `The image URL is refused: ${err.message}.`);
      throw fail('image_fetch_failed', `The image could not be fetched: ${(err as Error).message}.`);
    }
  } else {
    throw fail('invalid_image', 'Give the image as an http(s) URL or a data:image/(png|jpeg|gif|webp);base64 URI.');
  }
  const type = sniff(bytes);
  if (!type) throw fail('invalid_image', 'The image is not a PNG, JPEG, GIF or WebP.');
  return `data:${type};base64,${bytes.toString('base64')}`;
}
