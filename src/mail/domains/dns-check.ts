// Checks a domain's DKIM record through DNS: the TXT record at
// <selector>._domainkey.<domain> must carry exactly the domain's public key (p=),
// whatever the record's quoting, splitting into strings, or white space.
import type { Resolver } from 'node:dns/promises';

export type DkimCheck = 'verified' | 'missing' | 'mismatch' | 'lookup_failed';

export interface DnsCheckResult {
  dkim: DkimCheck;
  /** What was found or what went wrong, for people. */
  detail: string;
}

/** The tags of a DKIM record (`v=DKIM1; k=rsa; p=…`), names lower-cased, values without white space. */
function dkimTags(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) tags.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).replace(/\s+/g, ''));
  }
  return tags;
}

export async function checkDkim(resolver: Resolver, domain: { name: string; dkim_selector: string; dkim_public_key: string }): Promise<DnsCheckResult> {
  const name = `${domain.dkim_selector}._domainkey.${domain.name}`;
  let records: string[][];
  try {
    records = await resolver.resolveTxt(name);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA') return { dkim: 'missing', detail: `No TXT record at ${name}.` };
    return { dkim: 'lookup_failed', detail: `The DNS lookup of ${name} failed (${code ?? 'error'}); try again later.` };
  }
  const dkim = records.map((chunks) => chunks.join('')).map(dkimTags).filter((tags) => tags.has('p'));
  if (dkim.length === 0) return { dkim: 'missing', detail: `The TXT records at ${name} hold no DKIM key (p=).` };
  if (dkim.some((tags) => tags.get('p') === domain.dkim_public_key)) return { dkim: 'verified', detail: `The DKIM key at ${name} matches.` };
  return { dkim: 'mismatch', detail: `The DKIM key at ${name} is not this domain's key; publish the value under records.` };
}
