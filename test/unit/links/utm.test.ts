// UTM parameters on the redirect: the pairs in their fixed order, encoded, and
// left out where the chosen URL's own query has them (destination.ts withUtm).
import { describe, expect, it } from 'vitest';
import { withUtm } from '../../../src/links/redirect/destination.ts';
import { storedUtm, utmPairs } from '../../../src/links/short-links/utm.ts';

const pairs = utmPairs({ content: 'c d', source: 'a&b', medium: 'qr' })!;

describe('UTM on the redirect', () => {
  it('orders and encodes the pairs; none for no members', () => {
    expect(pairs.map(([, p]) => p)).toEqual(['utm_source=a%26b', 'utm_medium=qr', 'utm_content=c%20d']);
    expect(utmPairs({})).toBeNull();
    expect(utmPairs(undefined)).toBeNull();
    expect(storedUtm({})).toBeNull();
    expect(storedUtm(null)).toBeNull();
    expect(JSON.parse(storedUtm({ term: 't', source: 's' })!)).toEqual({ source: 's', term: 't' });
  });

  it('appends before the fragment, after the URL\'s own query, skipping names it has', () => {
    expect(withUtm('https://e.com/p', pairs)).toBe('https://e.com/p?utm_source=a%26b&utm_medium=qr&utm_content=c%20d');
    expect(withUtm('https://e.com/p?x=1#top', pairs)).toBe('https://e.com/p?x=1&utm_source=a%26b&utm_medium=qr&utm_content=c%20d#top');
    expect(withUtm('https://e.com/p?utm_source=news&utm_medium', pairs)).toBe('https://e.com/p?utm_source=news&utm_medium&utm_content=c%20d');
    // A name that only starts like one is not it; a '?' inside the fragment is no query.
    expect(withUtm('https://e.com/p?utm_sourcex=1', pairs)).toBe('https://e.com/p?utm_sourcex=1&utm_source=a%26b&utm_medium=qr&utm_content=c%20d');
    expect(withUtm('https://e.com/p#a?utm_source=1', pairs)).toBe('https://e.com/p?utm_source=a%26b&utm_medium=qr&utm_content=c%20d#a?utm_source=1');
    expect(withUtm('https://e.com/p?utm_source=1&utm_medium=2&utm_content=3', pairs)).toBe('https://e.com/p?utm_source=1&utm_medium=2&utm_content=3');
  });
});
