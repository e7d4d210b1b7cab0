// The DNS records an organization publishes for a sending domain.
export interface DnsRecord {
  /** What the record is for: dkim (signing key), tracking (the tracking host). */
  record: 'dkim' | 'tracking';
  type: 'TXT' | 'CNAME';
  /** The full name of the record. */
  name: string;
  value: string;
}

export function dnsRecords(domain: { name: string; dkim_selector: string; dkim_public_key: string }): DnsRecord[] {
  return [{ record: 'dkim', type: 'TXT', name: `${domain.dkim_selector}._domainkey.${domain.name}`, value: `v=DKIM1; k=rsa; p=${domain.dkim_public_key}` }];
}
