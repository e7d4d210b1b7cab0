// Sending domains of an organization. Each has its own DKIM key pair; a domain is
// `verified` once its DNS records are found (or an operator marks it), and only then
// may a message's From use it. A verified domain whose record is no longer found is
// `temporary_failure` and still sends for FAILING_GRACE_HOURS from the first failed
// check, as at Resend; a check after that makes it `failed`. The private key is stored sealed (the platform's
// SealedSecrets); only the sender opens it (sending/smtp-handover.ts).
import { randomUUID } from 'node:crypto';
import type { Pool } from '../../platform/postgres/pool.ts';
import { sealedAt } from '../../platform/secrets/sealed-columns.ts';
import type { SealedSecrets } from '../../platform/secrets/sealed-secrets.ts';
import { ShortLivedCache } from '../../platform/short-lived-cache.ts';
import { DKIM_PRIVATE_KEY } from '../sealed-columns.ts';
import { newDkimKeys } from './dkim-keys.ts';
import { dnsRecords, type DnsRecord } from './dns-records.ts';

export const DOMAIN_STATUSES = ['pending', 'verified', 'temporary_failure', 'failed'] as const;
/** How long a once verified domain whose record is gone keeps sending (Resend's 72 hours of re-checks). */
export const FAILING_GRACE_HOURS = 72;
/** SQL: a row of mail_domains a From address may use (verified, or failing for less than the grace). */
export const SENDS_FROM_DOMAIN = `(status = 'verified' OR (status = 'temporary_failure' AND failing_since > now() - interval '${FAILING_GRACE_HOURS} hours'))`;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];

export interface Domain {
  object: 'domain';
  id: string;
  name: string;
  status: DomainStatus;
  tracking_host: string | null;
  /** The DNS records to publish for verification and signing. */
  records: DnsRecord[];
  verified_at: string | null;
  last_checked_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface DomainRow {
  id: string;
  organization_id: string;
  name: string;
  tracking_host: string | null;
  dkim_selector: string;
  /** Sealed, as stored. */
  dkim_private_key: string;
  dkim_public_key: string;
  status: DomainStatus;
  /** Resend's region, as given at creation (kept and answered; mail goes out from this installation). */
  region: string;
  verified_at: Date | null;
  /** The first failed check of a once verified domain (temporary_failure), else null. */
  failing_since: Date | null;
  last_checked_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export const toDomain = (r: DomainRow): Domain => ({
  object: 'domain',
  id: r.id,
  name: r.name,
  status: r.status,
  tracking_host: r.tracking_host,
  records: dnsRecords(r),
  verified_at: r.verified_at?.toISOString() ?? null,
  last_checked_at: r.last_checked_at?.toISOString() ?? null,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

/** Which domains a request may see: null for all of the organization's, else these names. */
export type DomainScope = string[] | null;

export class Domains {
  private readonly pg: Pool;
  private readonly secrets: SealedSecrets;
  /** The verified domain names of an organization a moment ago (a From address is checked against them on every send). */
  private readonly verified: ShortLivedCache<ReadonlySet<string>>;

  constructor(pg: Pool, secrets: SealedSecrets, cacheMs = 0) {
    this.pg = pg;
    this.secrets = secrets;
    this.verified = new ShortLivedCache(cacheMs, 100_000);
  }

  /** The names of the organization's verified domains; a change reaches other processes within the cache time, this one at once. */
  verifiedNames(organizationId: string): Promise<ReadonlySet<string>> {
    return this.verified.get(organizationId, async () => {
      const { rows } = await this.pg.query<{ name: string }>(`SELECT name FROM mail_domains WHERE organization_id = $1 AND ${SENDS_FROM_DOMAIN}`, [organizationId]);
      return new Set(rows.map((r) => r.name));
    });
  }

  /** Adds a domain with a new DKIM key pair; undefined when the organization already has it. */
  async create(organizationId: string, name: string, trackingHost: string | null, region = 'us-east-1'): Promise<DomainRow | undefined> {
    const keys = await newDkimKeys();
    // The id made here: the sealed key is bound to its row.
    const id = randomUUID();
    const { rows } = await this.pg.query<DomainRow>(
      `INSERT INTO mail_domains (id, organization_id, name, tracking_host, dkim_selector, dkim_private_key, dkim_public_key, region)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (organization_id, name) DO NOTHING RETURNING *`,
      [id, organizationId, name, trackingHost, keys.selector, this.secrets.seal(keys.privateKeyPem, sealedAt(DKIM_PRIVATE_KEY, id)), keys.publicKeyBase64, region],
    );
    return rows[0];
  }

  async get(organizationId: string, id: string, scope: DomainScope): Promise<DomainRow | undefined> {
    const { rows } = await this.pg.query<DomainRow>(
      'SELECT * FROM mail_domains WHERE organization_id = $1 AND id = $2 AND ($3::text[] IS NULL OR name = ANY($3))',
      [organizationId, id, scope],
    );
    return rows[0];
  }

  /** The list query of the organization's visible domains, for pagination.ts. */
  listQuery(organizationId: string, scope: DomainScope): { select: string; params: unknown[] } {
    return { select: 'SELECT * FROM mail_domains WHERE organization_id = $1 AND ($2::text[] IS NULL OR name = ANY($2))', params: [organizationId, scope] };
  }

  async setTrackingHost(organizationId: string, id: string, trackingHost: string | null): Promise<DomainRow | undefined> {
    const { rows } = await this.pg.query<DomainRow>(
      'UPDATE mail_domains SET tracking_host = $3, updated_at = now() WHERE organization_id = $1 AND id = $2 RETURNING *',
      [organizationId, id, trackingHost],
    );
    return rows[0];
  }

  /** Records the outcome of a DNS check (or an operator's verification). */
  async setStatus(id: string, status: DomainStatus): Promise<DomainRow | undefined> {
    const { rows } = await this.pg.query<DomainRow>(
      `UPDATE mail_domains SET status = $2, last_checked_at = now(), updated_at = now(), failing_since = NULL,
              verified_at = CASE WHEN $2 = 'verified' THEN coalesce(verified_at, now()) ELSE NULL END
        WHERE id = $1 RETURNING *`,
      [id, status],
    );
    if (rows[0]) this.verified.delete(rows[0].organization_id);
    return rows[0];
  }

  /**
   * Records a check that did not find the domain's key: a domain that was verified (or is failing
   * for less than the grace) becomes or stays temporary_failure, from its first failed check on;
   * any other, or one failing longer, becomes failed. One statement, decided on the row as it is.
   */
  async recordFailedCheck(id: string): Promise<DomainRow | undefined> {
    const { rows } = await this.pg.query<DomainRow>(
      `WITH grace AS (
         SELECT id, status IN ('verified', 'temporary_failure') AND coalesce(failing_since, now()) > now() - interval '${FAILING_GRACE_HOURS} hours' AS kept
           FROM mail_domains WHERE id = $1
       )
       UPDATE mail_domains d SET
              status = CASE WHEN grace.kept THEN 'temporary_failure' ELSE 'failed' END,
              failing_since = CASE WHEN grace.kept THEN coalesce(d.failing_since, now()) END,
              verified_at = CASE WHEN grace.kept THEN d.verified_at END,
              last_checked_at = now(), updated_at = now()
         FROM grace WHERE d.id = grace.id RETURNING d.*`,
      [id],
    );
    if (rows[0]) this.verified.delete(rows[0].organization_id);
    return rows[0];
  }

  /** Any organization's domain, for operators. */
  async getAny(id: string): Promise<DomainRow | undefined> {
    const { rows } = await this.pg.query<DomainRow>('SELECT * FROM mail_domains WHERE id = $1', [id]);
    return rows[0];
  }

  async delete(organizationId: string, id: string, scope: DomainScope): Promise<DomainRow | undefined> {
    const { rows } = await this.pg.query<DomainRow>(
      'DELETE FROM mail_domains WHERE organization_id = $1 AND id = $2 AND ($3::text[] IS NULL OR name = ANY($3)) RETURNING *',
      [organizationId, id, scope],
    );
    this.verified.delete(organizationId);
    return rows[0];
  }
}
