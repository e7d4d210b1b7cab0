// Checks a received message's DKIM-Signature (relaxed/relaxed, rsa-sha256, as nodemailer signs)
// against a public key as the DNS record publishes it (base64 DER): the body hash, then the
// signature over the signed headers (RFC 6376, 3.4.2 and 3.4.4).
import { createHash, createPublicKey, createVerify } from 'node:crypto';

const relaxedHeader = (field: string): string => {
  const colon = field.indexOf(':');
  return `${field.slice(0, colon).trim().toLowerCase()}:${field.slice(colon + 1).replace(/\r\n/g, '').replace(/[ \t]+/g, ' ').trim()}`;
};

function relaxedBody(body: string): string {
  const lines = body.split('\r\n').map((line) => line.replace(/[ \t]+/g, ' ').replace(/ $/, ''));
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines.length === 0 ? '' : `${lines.join('\r\n')}\r\n`;
}

export function dkimVerifies(raw: string, publicKeyBase64: string): { bodyHash: boolean; signature: boolean } {
  const end = raw.indexOf('\r\n\r\n');
  const fields = raw.slice(0, end).split(/\r\n(?![ \t])/);
  const dkim = fields.find((f) => /^dkim-signature:/i.test(f));
  if (!dkim) throw new Error('the message has no DKIM-Signature');
  const tags = new Map(dkim.slice(dkim.indexOf(':') + 1).split(';').map((t) => t.trim()).filter(Boolean)
    .map((t) => [t.slice(0, t.indexOf('=')).trim(), t.slice(t.indexOf('=') + 1).replace(/\s+/g, '')] as const));
  if (tags.get('a') !== 'rsa-sha256' || tags.get('c') !== 'relaxed/relaxed') throw new Error(`unexpected DKIM algorithm or canonicalization: a=${tags.get('a')} c=${tags.get('c')}`);
  const bodyHash = createHash('sha256').update(relaxedBody(raw.slice(end + 4))).digest('base64') === tags.get('bh');
  // Each name in h= takes the last instance not taken yet, from the bottom up.
  const left = fields.filter((f) => f !== dkim);
  const signed = tags.get('h')!.split(':').map((name) => {
    for (let i = left.length - 1; i >= 0; i--) {
      if (left[i]!.slice(0, left[i]!.indexOf(':')).trim().toLowerCase() === name.toLowerCase()) return `${relaxedHeader(left.splice(i, 1)[0]!)}\r\n`;
    }
    return '';
  });
  const withoutB = dkim.replace(/(^|;)(\s*b\s*=)[^;]*/, '$1$2');
  const data = `${signed.join('')}${relaxedHeader(withoutB)}`;
  const key = createPublicKey({ key: Buffer.from(publicKeyBase64, 'base64'), format: 'der', type: 'spki' });
  const signature = createVerify('RSA-SHA256').update(data).verify(key, tags.get('b')!, 'base64');
  return { bodyHash, signature };
}
