// POST /api/v1/qr and POST /api/v1/barcode: images rendered in the pool.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { addComponents, ref } from '../../platform/http/components.ts';
import { API_BODY_ERRORS, errorResponses, RATE_LIMIT_HEADERS } from '../../platform/http/openapi.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { BWIP_ID, barcodeText, SYMBOLOGIES, SYMBOLOGY_NAME } from './barcode-rules.ts';
import { barcodeRefusal } from './barcode-refusal.ts';
import { withQrMarker } from '../redirect/qr-marker.ts';
import type { RenderPool } from './render-pool.ts';
import { loadHalftoneImage } from './halftone-image.ts';
import type { OutboundOptions } from '../../platform/http/outbound.ts';
import type { RenderRefusal, RenderResult, RenderTask } from './render-task.ts';
import { contrast, darkColors, MASK_SHAPES } from './qr-style.ts';
import { canUseAdvancedQrStyles } from '../workspaces/plans.ts';
import { domainFilter, LinkDomainName } from '../short-links/link-domain.ts';
import { hostOfUrl } from '../domains/host-names.ts';

const HexColor = (description: string, example: string) => Type.String({ pattern: '^#[0-9a-fA-F]{6}$', description, examples: [example] });

export const QrBody = Type.Object(
  {
    shortId: Type.String({ minLength: 1, maxLength: 64, description: 'The link to encode; the image holds its short URL (on the link\'s domain).' }),
    domain: Type.Optional({ ...LinkDomainName, description: 'The domain of the link, when the workspace has the short ID on several: a branded domain\'s name or the base domain\'s host. Left out: the link on the base domain, else the one link with this short ID.' }),
    format: StringEnum(['png', 'svg'] as const),
    size: Type.Optional(Type.Integer({ minimum: 100, maximum: 1024, default: 512, description: 'Width and height in pixels (SVG: its viewport).' })),
    margin: Type.Optional(Type.Integer({ minimum: 0, maximum: 16, default: 4, description: 'Quiet zone around the code, in modules.' })),
    errorCorrection: Type.Optional(StringEnum(['L', 'M', 'Q', 'H'] as const, { default: 'M', description: 'Error-correction level of an unstyled code; styled codes always use H.' })),
    style: Type.Optional(
      Type.Object(
        {
          moduleShape: Type.Optional(StringEnum(['square', 'dots', 'rounded'] as const, { description: 'Shape of every module but the three finder eyes: data, timing, alignment, format and version modules alike.' })),
          eyeFrameShape: Type.Optional(StringEnum(['square', 'rounded', 'circle'] as const, { description: 'Outer ring of the three finder patterns (circle: a near-circle, which every scanner reads).' })),
          eyeBallShape: Type.Optional(StringEnum(['square', 'rounded', 'circle'] as const, { description: 'Centre of the three finder patterns.' })),
          fgColor: Type.Optional(HexColor('Colour of the dark modules.', '#1a237e')),
          bgColor: Type.Optional(HexColor('Background colour.', '#ffffff')),
          eyeColor: Type.Optional(HexColor('Colour of the finder patterns (default: fgColor).', '#c62828')),
          gradient: Type.Optional(
            Type.Object(
              {
                type: StringEnum(['linear', 'radial'] as const),
                from: HexColor('First colour.', '#1a237e'),
                to: HexColor('Second colour.', '#6a1b9a'),
                rotation: Type.Optional(Type.Integer({ minimum: 0, maximum: 360, description: 'Degrees, linear gradients.' })),
              },
              { additionalProperties: false, description: 'Fills the modules instead of fgColor.' },
            ),
          ),
          qrShape: Type.Optional(StringEnum(['square', 'circle'] as const, { description: 'circle: a round code, decorative modules around the symbol.' })),
          ringText: Type.Optional(Type.String({ minLength: 1, maxLength: 48, description: 'Text set along a circular ring frame around the code.', examples: ['SCAN FOR THE MENU'] })),
          ringColor: Type.Optional(HexColor('Colour of the ring.', '#000000')),
          ringTextColor: Type.Optional(HexColor('Colour of the ring text.', '#ffffff')),
          halftone: Type.Optional(
            Type.Object(
              {
                image: Type.String({ minLength: 1, maxLength: 1_500_000, description: 'An http(s) URL (public addresses only; fetched with a timeout and a size cap, no redirects) or a data:image/(png|jpeg|gif|webp);base64 URI. At most 1 MiB.' }),
                opacity: Type.Optional(Type.Number({ minimum: 0.1, maximum: 1, default: 1 })),
              },
              { additionalProperties: false, description: 'Halftone art (Pro and Enterprise): the picture under the code, modules reduced to marks at their centres.' },
            ),
          ),
          mask: Type.Optional(StringEnum(MASK_SHAPES, { description: 'Shape mask (Pro and Enterprise): the code inside a silhouette (star: five-pointed, one point up) filled with decorative modules; outside it the image is transparent.' })),
        },
        { additionalProperties: false, description: 'Styled output is SVG only and always uses error correction H. Dark colours need a contrast of at least 3:1 against bgColor.' },
      ),
    ),
  },
  { $id: 'QrRequest', additionalProperties: false, title: 'QrRequest', examples: [{ shortId: 'spring-menu', format: 'svg', size: 512, style: { fgColor: '#1a237e' } }] },
);

export const BarcodeBody = Type.Object(
  {
    symbology: StringEnum(SYMBOLOGIES),
    data: Type.String({ minLength: 1, maxLength: 90, description: 'Digits with or without the check digit (verified or added); GS1-128: element strings like "(01)09506000134352(10)ABC"; Code 128: printable ASCII.' }),
    format: Type.Optional(StringEnum(['png', 'svg'] as const, { default: 'png' })),
    scale: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, default: 3, description: 'Pixels per module (PNG).' })),
    height: Type.Optional(Type.Integer({ minimum: 5, maximum: 50, default: 15, description: 'Bar height in millimetres.' })),
    includeText: Type.Optional(Type.Boolean({ default: true, description: 'Print the human-readable text under the bars.' })),
  },
  { $id: 'BarcodeRequest', additionalProperties: false, title: 'BarcodeRequest', examples: [{ symbology: 'ean-13', data: '5901234123457', format: 'png' }] },
);

// The image is a Buffer, which Fastify sends as it is, whatever the schema.
const IMAGE_HEADERS = {
  ...RATE_LIMIT_HEADERS,
  'cache-control': Type.String({ description: 'private, max-age=86400' }),
  etag: Type.String({ description: 'The same request always renders the same bytes; send it back as If-None-Match.' }),
};
const ImageResponse = {
  200: {
    description: 'The image, in the requested format.',
    headers: IMAGE_HEADERS,
    content: {
      'image/png': { schema: Type.String({ format: 'binary' }) },
      'image/svg+xml': { schema: Type.String() },
    },
  } as never,
  304: Type.Null({ description: 'Not modified: If-None-Match named the ETag of this image.', headers: IMAGE_HEADERS }),
};

/** Sends a rendered image with caching headers; the same request always renders the same bytes. */
function sendImage(request: FastifyRequest, reply: FastifyReply, task: RenderTask, image: RenderResult | RenderRefusal) {
  // Only barcodes are refused (their data comes from the client); a QR code's short URL always fits.
  if ('refused' in image) throw new Error(`the renderer refused a ${task.kind}: ${image.refused}`);
  const etag = `"${createHash('sha256').update(JSON.stringify(task)).digest('base64url').slice(0, 27)}"`;
  reply.header('cache-control', 'private, max-age=86400').header('etag', etag);
  if (request.headers['if-none-match'] === etag) return reply.status(304).send();
  return reply.type(image.contentType).send(Buffer.from(image.body));
}

export async function qrRoutes(app: App, deps: { pool: RenderPool; pg: Pool; shortLinkBase: string; images: OutboundOptions }): Promise<void> {
  addComponents(app, [QrBody, BarcodeBody]);

  app.post('/qr', {
    // Room for a base64 halftone image of up to 1 MiB.
    bodyLimit: 2 * 1024 * 1024,
    schema: {
      tags: ['qr'], operationId: 'renderQrCode', summary: 'Render the QR code of a link (PNG or SVG)',
      description: 'Encodes the link\'s short URL with the `?qr` marker (a scan of it is recorded with trigger qr; the redirect strips the marker). 100 to 1024 px. A `style` needs format svg (400 styled_png_not_supported) and always uses error correction H. 503 render_busy when the renderer is saturated.',
      body: ref(QrBody),
      response: { ...ImageResponse, ...errorResponses(...API_BODY_ERRORS, 404, 503) },
    },
  }, async (request, reply) => {
    const body = request.body;
    if (body.style && body.format !== 'svg') {
      throw new ApiError(400, 'styled_png_not_supported', 'Styled QR codes are SVG only; ask for format "svg".', [{ path: '/format', message: 'must be svg with a style' }]);
    }
    if ((body.style?.mask || body.style?.halftone) && !canUseAdvancedQrStyles(request.linksAuth.plan)) {
      throw new ApiError(403, 'plan_upgrade_required', 'Shape masks and halftone art need the Pro or Enterprise plan.');
    }
    if (body.style) {
      // Dark modules must stand out from the background, or phones will not read the code.
      const bg = body.style.bgColor ?? '#ffffff';
      const weak = darkColors(body.style).find((color) => contrast(color, bg) < 3);
      if (weak) throw new ApiError(400, 'insufficient_contrast', `${weak} on ${bg} is too faint to scan: dark colours need a contrast of at least 3:1 against the background.`, [{ path: '/style', message: 'contrast below 3:1' }]);
    }
    // The short ID on the domain asked for; without one, the base domain's link first.
    const domain = domainFilter(body.domain, hostOfUrl(deps.shortLinkBase));
    const found = await deps.pg.query<{ domain: string | null }>(
      `SELECT domain FROM links WHERE short_id = $1 AND workspace_id = $2 AND (NOT $3::boolean OR domain IS NOT DISTINCT FROM $4::text)
        ORDER BY domain NULLS FIRST LIMIT 1`,
      [body.shortId, request.linksAuth.workspaceId, domain !== undefined, domain ?? null],
    );
    const link = found.rows[0];
    if (!link) throw notFound('link');
    // The picture is fetched and checked here, before any rendering; the worker only embeds it.
    const style = body.style?.halftone
      ? { ...body.style, halftone: { ...body.style.halftone, image: await loadHalftoneImage(body.style.halftone.image, deps.images) } }
      : body.style;
    const task: RenderTask = {
      kind: 'qr',
      // With the marker that tells the redirect this visitor scanned the code (qr-marker.ts).
      text: withQrMarker(link.domain ? `https://${link.domain}/${body.shortId}` : `${deps.shortLinkBase}/${body.shortId}`),
      format: body.format,
      size: body.size ?? 512,
      margin: body.margin ?? 4,
      errorCorrection: body.style ? 'H' : (body.errorCorrection ?? 'M'),
      fgColor: body.style?.fgColor ?? '#000000',
      bgColor: body.style?.bgColor ?? '#ffffff',
      ...(style ? { style } : {}),
    };
    return sendImage(request, reply, task, await deps.pool.render(task));
  });

  app.post('/barcode', {
    schema: {
      tags: ['qr'], operationId: 'renderBarcode', summary: 'Render a barcode (UPC-A, EAN-13, EAN-8, ITF-14, GS1-128, Code 128)',
      description: 'Check digits are verified: a wrong one gets 400 invalid_check_digit whose message names the expected digit (e.g. "EAN-13: the check digit should be 7, not 8."); data the symbology cannot hold gets 400 invalid_barcode_data naming the rule. GS1-128 element strings are checked against the GS1 rules for every application identifier (the AI exists; length; numeric or GS1 character set 82; dates, with day 00 only where GS1 allows it; check digits of GTIN, SSCC, GLN and the like: 400 invalid_check_digit); at most 48 characters of AIs and data.',
      body: ref(BarcodeBody),
      response: { ...ImageResponse, ...errorResponses(...API_BODY_ERRORS, 503) },
    },
  }, async (request, reply) => {
    const body = request.body;
    const task: RenderTask = {
      kind: 'barcode',
      bcid: BWIP_ID[body.symbology],
      text: barcodeText(body.symbology, body.data),
      format: body.format ?? 'png',
      scale: body.scale ?? 3,
      height: body.height ?? 15,
      includeText: body.includeText ?? true,
    };
    const image = await deps.pool.render(task);
    if ('refused' in image) throw barcodeRefusal(SYMBOLOGY_NAME[body.symbology], image.refused);
    return sendImage(request, reply, task, image);
  });
}
