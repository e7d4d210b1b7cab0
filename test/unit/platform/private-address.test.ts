// isPrivateAddress decides what webhooks and other outbound fetches may connect to:
// every special-purpose range (IANA's registries, as ipaddr.js keeps them) is refused,
// ordinary public unicast addresses are not.
import { describe, expect, it } from 'vitest';
import { isPrivateAddress, outboundTarget } from '../../../src/platform/http/outbound.ts';

const NOT_PUBLIC = [
  // IPv4
  '0.0.0.0', '0.1.2.3', '10.1.2.3', '100.64.0.1', '127.0.0.1', '127.255.255.254', '169.254.169.254', '172.16.0.1', '172.31.255.255',
  '192.0.0.8', '192.0.2.1', '192.88.99.1', '192.168.1.1', '198.18.0.1', '198.51.100.7', '203.0.113.9', '224.0.0.1', '240.0.0.1',
  '255.255.255.255',
  // IPv6
  '::', '::1', 'fe80::1', 'fe80::1%eth0', 'fc00::1', 'fd12:3456::1', 'ff02::1', 'fec0::1', 'feff::1',
  '64:ff9b::7f00:1', '64:ff9b:1::1', '64:ff9b:1:ffff::a00:1', // NAT64, well-known and local-use (RFC 8215)
  '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:7f00:1', // IPv4-mapped private
  '::ffff:0:7f00:1', '::ffff:0:808:808', // IPv4-translated (RFC 6145, ::ffff:0:0:0/96)
  '::7f00:1', '::a00:1', // IPv4-compatible (deprecated ::/96)
  '100::1', // discard-only
  '2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:2::1', '2001:10::1', '2001:20::1', '2001:db8::1', '2002:7f00:1::1', '3fff::1', '5f00::1',
  // not an address at all
  'localhost', '', '1.2.3', '0x7f.0.0.1',
];

const PUBLIC = ['8.8.8.8', '1.1.1.1', '93.184.215.14', '151.101.1.140', '2606:4700:4700::1111', '2a00:1450:4001:82b::200e', '2001:4860:4860::8888', '::ffff:8.8.8.8'];

describe('isPrivateAddress', () => {
  it.each(NOT_PUBLIC)('refuses %s', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(PUBLIC)('allows %s', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });

  it('refuses address literals in URLs before any connection', () => {
    for (const url of ['https://[64:ff9b:1::a00:1]/hook', 'https://[fec0::1]/', 'https://[::ffff:0:7f00:1]/', 'http://[::ffff:127.0.0.1]/']) {
      expect(() => outboundTarget(url, []), url).toThrow(/not a public address/);
    }
    expect(() => outboundTarget('https://[2606:4700:4700::1111]/', [])).not.toThrow();
  });
});
