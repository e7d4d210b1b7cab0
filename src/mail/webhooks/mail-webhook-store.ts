// Webhook endpoints of a mail organization, in Resend's shapes: create with
// {endpoint, events}, read (with its signing secret, as Resend answers), list,
// update endpoint/events/status, remove, rotate the signing secret. Secrets are
// Standard Webhooks secrets (whsec_<base64>), kept sealed (the platform's
// SealedSecrets) and opened when read; after a rotation the old one still
// signs for WEBHOOK_SECRET_GRACE_MS, so receivers switch without loss.
// A refused change changes nothing and says why (MailWebhookRefusal); the routes
// decide the answer (mail-webhook-refusals.ts).
import { randomUUID } from 'node:crypto';
import type { Pool } from '../../platform/postgres/pool.ts';
import { sealedAt } from '../../platform/secrets/sealed-columns.ts';
import type { SealedSecrets } from '../../platform/secrets/sealed-secrets.ts';
import { endpointUrlResult, type EndpointUrlRefusal } from '../../platform/webhooks/endpoint-url.ts';
import { newStandardSecret } from '../../platform/webhooks/standard-webhooks.ts';
import { MAIL_WEBHOOK_SECRET } from '../sealed-columns.ts';

export const MAX_ENDPOINTS_PER_ORGANIZATION = 20;

export interface MailEndpointRow {
  id: string;
  organization_id: string;
  url: string;
  events: string[];
  status: 'enabled' | 'disabled';
  /** Opened: a row read through the store holds its secrets in clear. */
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export const toWebhook = (row: MailEndpointRow) => ({
  object: 'webhook' as const,
  id: row.id,
  endpoint: row.url,
  events: row.events,
  status: row.status,
  created_at: row.created_at.toISOString(),
});

/** Why a webhook change was refused. */
export type MailWebhookRefusal = EndpointUrlRefusal | { reason: 'webhook_limit_reached'; max: number };

/** A webhook change's result: the row, or why it was refused. */
export type MailWebhookResult<T> = { ok: true; row: T } | { ok: false; refusal: MailWebhookRefusal };

export class MailWebhookStore {
  private readonly pg: Pool;
  private readonly options: { allowHosts: readonly string[]; secretGraceMs: number; secrets: SealedSecrets };

  constructor(pg: Pool, options: { allowHosts: readonly string[]; secretGraceMs: number; secrets: SealedSecrets }) {
    this.pg = pg;
    this.options = options;
  }

  /** The row with its secrets opened. */
  private opened(row: MailEndpointRow): MailEndpointRow {
    const { secrets } = this.options;
    // The previous secret was the row's secret (copied by SQL at a rotation): bound as such.
    const at = sealedAt(MAIL_WEBHOOK_SECRET, row.id);
    return { ...row, secret: secrets.open(row.secret, at), previous_secret: secrets.openNullable(row.previous_secret, at) };
  }

  async create(organizationId: string, input: { endpoint: string; events: string[] }): Promise<MailWebhookResult<MailEndpointRow>> {
    const checked = endpointUrlResult(input.endpoint, this.options.allowHosts, 'endpoint');
    if (!checked.ok) return checked;
    // One statement: the count and the insert see the same rows, under the organization's row lock.
    const id = randomUUID();
    const { rows } = await this.pg.query<MailEndpointRow>(
      `WITH org AS (SELECT id FROM mail_organizations WHERE id = $2 FOR UPDATE)
       INSERT INTO mail_webhook_endpoints (id, organization_id, url, events, secret)
       SELECT $1, org.id, $3, $4, $5 FROM org
        WHERE (SELECT count(*) FROM mail_webhook_endpoints WHERE organization_id = $2) < $6
       RETURNING *`,
      [id, organizationId, checked.url, [...new Set(input.events)], this.options.secrets.seal(newStandardSecret(), sealedAt(MAIL_WEBHOOK_SECRET, id)), MAX_ENDPOINTS_PER_ORGANIZATION],
    );
    if (!rows[0]) return { ok: false, refusal: { reason: 'webhook_limit_reached', max: MAX_ENDPOINTS_PER_ORGANIZATION } };
    return { ok: true, row: this.opened(rows[0]) };
  }

  async get(organizationId: string, id: string): Promise<MailEndpointRow | undefined> {
    const { rows: [row] } = await this.pg.query<MailEndpointRow>('SELECT * FROM mail_webhook_endpoints WHERE organization_id = $1 AND id = $2', [organizationId, id]);
    return row && this.opened(row);
  }

  /** The endpoint changed (undefined when the organization has none of this id), or the refusal. */
  async update(organizationId: string, id: string, input: { endpoint?: string; events?: string[]; status?: 'enabled' | 'disabled' }): Promise<MailWebhookResult<MailEndpointRow | undefined>> {
    const checked = input.endpoint === undefined ? undefined : endpointUrlResult(input.endpoint, this.options.allowHosts, 'endpoint');
    if (checked && !checked.ok) return checked;
    const { rows } = await this.pg.query<MailEndpointRow>(
      `UPDATE mail_webhook_endpoints SET url = coalesce($3, url), events = coalesce($4, events), status = coalesce($5, status), updated_at = now()
        WHERE organization_id = $1 AND id = $2 RETURNING *`,
      [organizationId, id, checked?.url ?? null, input.events ? [...new Set(input.events)] : null, input.status ?? null],
    );
    return { ok: true, row: rows[0] && this.opened(rows[0]) };
  }

  /** Removes the endpoint with its delivery log; queued deliveries are dropped with it. */
  async remove(organizationId: string, id: string): Promise<boolean> {
    return ((await this.pg.query('DELETE FROM mail_webhook_endpoints WHERE organization_id = $1 AND id = $2', [organizationId, id])).rowCount ?? 0) > 0;
  }

  /** A new secret; the old one keeps signing (a second v1 signature) for the grace period. */
  async rotateSecret(organizationId: string, id: string): Promise<MailEndpointRow | undefined> {
    const { rows } = await this.pg.query<MailEndpointRow>(
      `UPDATE mail_webhook_endpoints SET previous_secret = secret, secret = $3,
              previous_secret_expires_at = now() + make_interval(secs => $4::double precision / 1000), updated_at = now()
        WHERE organization_id = $1 AND id = $2 RETURNING *`,
      [organizationId, id, this.options.secrets.seal(newStandardSecret(), sealedAt(MAIL_WEBHOOK_SECRET, id)), this.options.secretGraceMs],
    );
    return rows[0] && this.opened(rows[0]);
  }
}
