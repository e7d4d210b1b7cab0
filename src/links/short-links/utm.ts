// UTM parameters set on a link: {source, medium, campaign, term, content}, each
// optional. The redirect appends them to the destination as utm_source=… (in
// that order, percent-encoded), except those the destination's own query already
// has: the destination's values win.
import { Type, type Static } from '@sinclair/typebox';

export const UTM_FIELDS = ['source', 'medium', 'campaign', 'term', 'content'] as const;
export const UTM_MAX_LENGTH = 200;

const UtmValue = (what: string) =>
  Type.String({
    minLength: 1,
    maxLength: UTM_MAX_LENGTH,
    pattern: '^[^\\u0000-\\u001f\\u007f]+$',
    description: `utm_${what}: 1 to ${UTM_MAX_LENGTH} characters, any but control characters; percent-encoded on the redirect.`,
  });

export const Utm = Type.Object(
  {
    source: Type.Optional(UtmValue('source')),
    medium: Type.Optional(UtmValue('medium')),
    campaign: Type.Optional(UtmValue('campaign')),
    term: Type.Optional(UtmValue('term')),
    content: Type.Optional(UtmValue('content')),
  },
  {
    additionalProperties: false,
    description: 'UTM parameters the redirect appends to the destination (also to device, country and A/B destinations) as utm_source, utm_medium, utm_campaign, utm_term, utm_content, except those the destination already has. A PATCH replaces the whole object; {} or null: none.',
    examples: [{ source: 'flyer', medium: 'qr', campaign: 'spring' }],
  },
);
export type UtmType = Static<typeof Utm>;

/** The stored form: only the members given, or null for none. */
export function storedUtm(utm: UtmType | null | undefined): string | null {
  if (!utm) return null;
  const given = UTM_FIELDS.filter((f) => utm[f] !== undefined);
  return given.length === 0 ? null : JSON.stringify(Object.fromEntries(given.map((f) => [f, utm[f]])));
}

/** What a redirect appends: each parameter's name and its `name=value` pair, in the fixed order; null for none. */
export function utmPairs(utm: Readonly<Record<string, string>> | null | undefined): [string, string][] | null {
  if (!utm) return null;
  const pairs: [string, string][] = [];
  for (const field of UTM_FIELDS) {
    const value = utm[field];
    if (value !== undefined) pairs.push([`utm_${field}`, `utm_${field}=${encodeURIComponent(value)}`]);
  }
  return pairs.length > 0 ? pairs : null;
}
