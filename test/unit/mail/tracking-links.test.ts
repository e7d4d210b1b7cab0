import { describe, expect, it } from 'vitest';
import { linkToken, readLinkToken, trackHtml } from '../../../src/mail/tracking/tracking-links.ts';

const SECRET = 'unit-test-secret-0123456789';

describe('signed mail links', () => {
  it('read back what they carry, and only for their kind and secret', () => {
    const token = linkToken(SECRET, 'c', { m: 'message-1', u: 'https://example.com/?a=1&b=2#x' });
    expect(readLinkToken(SECRET, 'c', token)).toEqual({ m: 'message-1', u: 'https://example.com/?a=1&b=2#x' });
    expect(readLinkToken(SECRET, 'o', token)).toBeUndefined();
    expect(readLinkToken('another-secret-0123456789', 'c', token)).toBeUndefined();
  });

  it('refuse any changed character, the MAC\'s last one included', () => {
    const token = linkToken(SECRET, 'u', { m: 'message-2', r: 'reader@example.net', t: 'topic' });
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (let i = 0; i < token.length; i++) {
      if (token[i] === '.') continue;
      const other = alphabet[(alphabet.indexOf(token[i]!) + 1) % alphabet.length]!;
      expect(readLinkToken(SECRET, 'u', token.slice(0, i) + other + token.slice(i + 1)), `position ${i}`).toBeUndefined();
    }
  });

  it('rewrite http(s) links of <a> only, keep the destination exact, and add a pixel before </body>', () => {
    const html = '<html><body><a href="https://example.com/p?a=1&amp;b=2#f">x</a><a href="mailto:a@b.c">m</a><img src="https://example.com/i.png"></body></html>';
    const out = trackHtml(html, SECRET, 'https://t.example.org', 'message-3');
    const token = /href="https:\/\/t\.example\.org\/m\/c\/([^"]+)"/.exec(out)![1]!;
    expect(readLinkToken(SECRET, 'c', token)).toEqual({ m: 'message-3', u: 'https://example.com/p?a=1&b=2#f' });
    expect(out).toContain('href="mailto:a@b.c"');
    expect(out).toContain('<img src="https://example.com/i.png">');
    expect(out).toMatch(/<img src="https:\/\/t\.example\.org\/m\/o\/[^"]+"[^>]*><\/body><\/html>$/);
  });
});
