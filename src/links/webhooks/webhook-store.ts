// Webhook endpoints of a workspace: registration, secrets and their rotation.
// Secrets are kept sealed (the platform's SealedSecrets) and opened when read,
// because every request is signed with them. A refused registration changes
// nothing and says why (WebhookRefusal); webhook-refusals.ts answers it.
import { randomBytes, randomUUID } from 'node:crypto';
import { endpointUrlResult, type EndpointUrlRefusal } from '../../platform/webhooks/endpoint-url.ts';
import { withTransaction, type Pool } from '../../platform/postgres/pool.ts';
import { sealedAt } from '../../platform/secrets/sealed-columns.ts';
import type { SealedSecrets } from '../../platform/secrets/sealed-secrets.ts';
import { LINK_WEBHOOK_SECRET } from '../sealed-columns.ts';
import { DEFAULT_WEBHOOK_EVENTS, type CreateWebhookInput, type UpdateWebhookInput, type WebhookEndpointType, type WebhookEvent } from './webhook-schemas.ts';

export const MAX_ENDPOINTS_PER_WORKSPACE = 10;

export interface EndpointRow {
  id: string;
  workspace_id: string;
  url: string;
  description: string | null;
  events: WebhookEvent[];
  /** Opened: a row read through the store holds its secrets in clear. */
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const newSecret = () => `whsec_${randomBytes(24).toString('base64url')}`;

export function toEndpoint(row: EndpointRow): WebhookEndpointType {
  const graceLeft = row.previous_secret_expires_at && row.previous_secret_expires_at.getTime() > Date.now();
  return {
    object: 'webhook_endpoint',
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events,
    secretHint: `${row.secret.slice(0, 10)}…`,
    previousSecretExpiresAt: graceLeft ? row.previous_secret_expires_at!.toISOString() : null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Why a webhook endpoint was not registered. */
export type WebhookRefusal = EndpointUrlRefusal | { reason: 'webhook_limit_reached'; max: number };

export class WebhookStore {
  private readonly pg: Pool;
  private readonly options: { allowHosts: readonly string[]; secretGraceMs: number; secrets: SealedSecrets };

  constructor(pg: Pool, options: { allowHosts: readonly string[]; secretGraceMs: number; secrets: SealedSecrets }) {
    this.pg = pg;
    this.options = options;
  }

  /** The row with its secrets opened. */
  private opened(row: EndpointRow): EndpointRow {
    const { secrets } = this.options;
    // The previous secret was the row's secret (copied by SQL at a rotation): bound as such.
    const at = sealedAt(LINK_WEBHOOK_SECRET, row.id);
    return { ...row, secret: secrets.open(row.secret, at), previous_secret: secrets.openNullable(row.previous_secret, at) };
  }

  async create(workspaceId: string, input: CreateWebhookInput): Promise<{ ok: true; row: EndpointRow; secret: string } | { ok: false; refusal: WebhookRefusal }> {
    const checked = endpointUrlResult(input.url, this.options.allowHosts);
    if (!checked.ok) return checked;
    const url = checked.url;
    const secret = newSecret();
    const id = randomUUID();
    // The workspace's row lock serialises creates; the count then runs as its own statement, which sees every insert committed before it.
    const rows = await withTransaction(this.pg, async (client) => {
      await client.query('SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE', [workspaceId]);
      const { rows: [counted] } = await client.query<{ n: string }>('SELECT count(*) AS n FROM webhook_endpoints WHERE workspace_id = $1', [workspaceId]);
      if (Number(counted!.n) >= MAX_ENDPOINTS_PER_WORKSPACE) return [];
      return (await client.query<EndpointRow>(
        'INSERT INTO webhook_endpoints (id, workspace_id, url, description, secret, events) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *',
        [id, workspaceId, url, input.description ?? null, this.options.secrets.seal(secret, sealedAt(LINK_WEBHOOK_SECRET, id)), input.events ?? DEFAULT_WEBHOOK_EVENTS],
      )).rows;
    });
    if (!rows[0]) return { ok: false, refusal: { reason: 'webhook_limit_reached', max: MAX_ENDPOINTS_PER_WORKSPACE } };
    return { ok: true, row: this.opened(rows[0]), secret };
  }

  async list(workspaceId: string): Promise<EndpointRow[]> {
    return (await this.pg.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE workspace_id = $1 ORDER BY created_at, id', [workspaceId])).rows.map((row) => this.opened(row));
  }

  async get(workspaceId: string, id: string): Promise<EndpointRow | undefined> {
    const { rows: [row] } = await this.pg.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE workspace_id = $1 AND id = $2', [workspaceId, id]);
    return row && this.opened(row);
  }

  /** Changes the description or the events; undefined when there is no such endpoint. A change of events applies to events from now on. */
  async update(workspaceId: string, id: string, changes: UpdateWebhookInput): Promise<EndpointRow | undefined> {
    const { rows } = await this.pg.query<EndpointRow>(
      `UPDATE webhook_endpoints SET description = CASE WHEN $3 THEN $4 ELSE description END, events = coalesce($5, events),
              updated_at = date_trunc('milliseconds', now())
        WHERE workspace_id = $1 AND id = $2 RETURNING *`,
      [workspaceId, id, changes.description !== undefined, changes.description ?? null, changes.events ?? null],
    );
    return rows[0] && this.opened(rows[0]);
  }

  /** Deletes the endpoint with its delivery log; queued deliveries are dropped with it. */
  async delete(workspaceId: string, id: string): Promise<boolean> {
    return ((await this.pg.query('DELETE FROM webhook_endpoints WHERE workspace_id = $1 AND id = $2', [workspaceId, id])).rowCount ?? 0) > 0;
  }

  /** A new secret; the old one still signs requests for the grace period, so receivers can switch without losing events. */
  async rotateSecret(workspaceId: string, id: string): Promise<{ row: EndpointRow; secret: string } | undefined> {
    const secret = newSecret();
    const { rows } = await this.pg.query<EndpointRow>(
      `UPDATE webhook_endpoints SET previous_secret = secret, secret = $3,
              previous_secret_expires_at = date_trunc('milliseconds', now()) + make_interval(secs => $4::double precision / 1000),
              updated_at = date_trunc('milliseconds', now())
        WHERE workspace_id = $1 AND id = $2 RETURNING *`,
      [workspaceId, id, this.options.secrets.seal(secret, sealedAt(LINK_WEBHOOK_SECRET, id)), this.options.secretGraceMs],
    );
    return rows[0] ? { row: this.opened(rows[0]), secret } : undefined;
  }
}
