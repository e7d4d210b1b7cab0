import { describe, expect, it } from 'vitest';
import { limitKey } from '../../../src/platform/http/client-ip.ts';

describe('limitKey', () => {
  it('keeps an IPv4 address, also when written IPv4-mapped', () => {
    expect(limitKey('203.0.113.7', 64)).toBe('203.0.113.7');
    expect(limitKey('::ffff:203.0.113.7', 64)).toBe('203.0.113.7');
    expect(limitKey('::FFFF:cb00:7107', 64)).toBe('203.0.113.7');
  });

  it('reduces an IPv6 address to its network of the configured size, however it is written', () => {
    expect(limitKey('2001:db8:1:2:3:4:5:6', 64)).toBe('2001:db8:1:2::/64');
    expect(limitKey('2001:DB8:1:2:ffff::9', 64)).toBe('2001:db8:1:2::/64');
    expect(limitKey('2001:0db8:0001:0002:0000:0000:0000:0009', 64)).toBe('2001:db8:1:2::/64');
    expect(limitKey('2001:db8:1:2:3:4:5:6', 48)).toBe('2001:db8:1::/48');
    expect(limitKey('2001:db8:1:2:3:4:5:6', 56)).toBe(limitKey('2001:db8:1:ff:9::', 56));
    expect(limitKey('2001:db8:1:2:3:4:5:6', 128)).toBe('2001:db8:1:2:3:4:5:6/128');
  });

  it('keeps anything unparseable as its own subject', () => {
    expect(limitKey('not-an-ip', 64)).toBe('not-an-ip');
  });
});
