// The shape of each provider's pixel ID. A pixel ID is written into the redirect
// page's HTML and script (redirect/pixel-page.ts), so only IDs of the provider's
// documented form are stored; the page escapes them all the same.
import type { PIXEL_PROVIDERS } from './link-schemas.ts';

type Provider = (typeof PIXEL_PROVIDERS)[number];

export const PIXEL_ID_FORMATS: Record<Provider, { pattern: RegExp; example: string }> = {
  meta: { pattern: /^[0-9]{1,20}$/, example: '1234567890123456' },
  google: { pattern: /^(AW|G|GT|DC)-[A-Za-z0-9]{1,30}$/, example: 'AW-123456789 or G-ABC123XYZ' },
  tiktok: { pattern: /^[A-Z0-9]{1,30}$/, example: 'C4A1B2C3D4E5F6G7H8I9' },
  linkedin: { pattern: /^[0-9]{1,20}$/, example: '1234567' },
  x: { pattern: /^[a-z0-9]{1,20}$/, example: 'o1a2b' },
  pinterest: { pattern: /^[0-9]{1,20}$/, example: '2612345678901' },
  snapchat: { pattern: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, example: '9f1c2d3e-4a5b-6c7d-8e9f-0a1b2c3d4e5f' },
  reddit: { pattern: /^[a-z0-9]{1,3}_[A-Za-z0-9]{1,30}$/, example: 'a2_abc123' },
};

/** Why this pixel ID is not of its provider's form, if it is not. */
export function pixelIdProblem(provider: string, pixelId: string): string | undefined {
  const format = PIXEL_ID_FORMATS[provider as Provider];
  if (!format) return `unknown provider "${provider}"`;
  return format.pattern.test(pixelId) ? undefined : `is not a ${provider} pixel ID (e.g. ${format.example})`;
}

/** The formats as one line, for the schema's description. */
export const PIXEL_ID_FORMATS_TEXT = Object.entries(PIXEL_ID_FORMATS)
  .map(([provider, f]) => `${provider} \`${f.pattern.source}\``)
  .join(', ');
