// Text every store of ours can hold. Postgres refuses NUL in text and jsonb, and a
// lone UTF-16 surrogate (JSON allows "\ud800") cannot be written as UTF-8: Postgres
// refuses it in jsonb and Avro would silently turn it into U+FFFD. Such a value is
// the client's mistake, so it is refused with the request's validation (validation.ts)
// or a message's (the SMTP relay), naming the field, before it can reach a write
// shared with other requests.

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `text` cannot be stored, or null when it can. */
export function unstorable(text: string): string | null {
  if (text.includes('\u0000')) return 'contains a NUL character (\\u0000)';
  if (LONE_SURROGATE.test(text)) return 'contains a lone UTF-16 surrogate';
  return null;
}

const pointerPart = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The JSON pointer and reason of the first key or string in `value` that cannot be stored, or null. */
export function findUnstorable(value: unknown, path = ''): { path: string; reason: string } | null {
  if (typeof value === 'string') {
    const reason = unstorable(value);
    return reason ? { path, reason } : null;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorable(value[i], `${path}/${i}`);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      const keyReason = unstorable(key);
      if (keyReason) return { path: `${path}/${pointerPart(key)}`, reason: `its name ${keyReason}` };
      const found = findUnstorable(inner, `${path}/${pointerPart(key)}`);
      if (found) return found;
    }
  }
  return null;
}
