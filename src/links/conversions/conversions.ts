// Records conversions and tracked clicks for a scan's click ID. The click ID is
// a signed token (click-id.ts), so it is checked here without waiting for the
// scan to reach any store. The Postgres row is the idempotency record and the
// outbox: it commits first, is then published to the `conversions` topic, and
// the platform's outbox relay publishes what a crash or a Kafka outage left
// behind, in one batch. A conversion the rules refuse is a ConversionRefusal and
// records nothing; conversion-refusals.ts answers it, the same from REST and MCP.
import { randomUUID } from 'node:crypto';
import { bestEffort } from '../../platform/background.ts';
import type { Publisher } from '../../platform/kafka/publisher.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Outbox } from '../../platform/outbox/outbox.ts';
import { outboxRelay } from '../../platform/outbox/outbox-relay.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { conversionsTopic } from '../../../topics/conversions.ts';
import { CLICK_ID_FORMAT, type ClickIds } from '../scans/click-id.ts';
import type { ConversionEvent } from './conversion-event.ts';
import type { ConversionType, TrackInput } from './conversion-schemas.ts';

const MAX_METADATA_BYTES = 4096;
const METADATA_KEY = /^[^\u0000-\u001f\u007f]{1,64}$/;
const MAX_DECIMALS = 6;
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

interface ConversionRow {
  id: string;
  record: ConversionEvent;
  created_at: Date;
}

function toConversion(row: ConversionRow, duplicate: boolean): ConversionType {
  const e = row.record;
  return {
    object: 'conversion',
    id: e.conversionId,
    type: e.type,
    event: e.event,
    clickId: e.clickId,
    scanId: e.scanId,
    linkId: e.linkId,
    campaignId: e.campaignId,
    amount: e.amountMicros === null ? null : e.amountMicros / 1_000_000,
    currency: e.currency,
    externalId: e.externalId,
    metadata: e.metadata,
    createdAt: new Date(e.timestamp).toISOString(),
    duplicate,
  };
}

/** Why a conversion was refused (nothing is recorded). */
export type ConversionRefusal =
  | { reason: 'click_id_malformed' }
  /** The click ID's signature does not verify (`link_gone`: it does, but its link was deleted). */
  | { reason: 'click_id_unknown'; linkGone: boolean }
  | { reason: 'click_id_other_workspace' }
  | { reason: 'amount_not_allowed' | 'amount_required' | 'currency_required' }
  | { reason: 'unknown_currency'; currency: string }
  | { reason: 'amount_too_precise'; maxDecimals: number }
  | { reason: 'invalid_metadata_key'; key: string }
  | { reason: 'metadata_too_large'; maxBytes: number };

export type ConversionResult = { ok: true; conversion: ConversionType } | { ok: false; refusal: ConversionRefusal };

const refuse = (refusal: ConversionRefusal): { ok: false; refusal: ConversionRefusal } => ({ ok: false, refusal });

/** Amount and currency, checked: both or neither, a known currency, at most six decimals. */
function revenueOf(input: TrackInput, type: string): { amountMicros: number | null; currency: string | null } | { ok: false; refusal: ConversionRefusal } {
  if (input.amount === undefined && input.currency === undefined) return { amountMicros: null, currency: null };
  if (type === 'click') return refuse({ reason: 'amount_not_allowed' });
  if (input.amount === undefined) return refuse({ reason: 'amount_required' });
  if (input.currency === undefined) return refuse({ reason: 'currency_required' });
  const currency = input.currency.toUpperCase();
  if (!CURRENCIES.has(currency)) return refuse({ reason: 'unknown_currency', currency: input.currency });
  const text = String(input.amount);
  const decimals = text.includes('e') ? Infinity : (text.split('.')[1]?.length ?? 0);
  if (decimals > MAX_DECIMALS) return refuse({ reason: 'amount_too_precise', maxDecimals: MAX_DECIMALS });
  return { amountMicros: Math.round(input.amount * 1_000_000), currency };
}

export class Conversions {
  private readonly pg: Pool;
  private readonly publisher: Publisher;
  private readonly log: Logger;
  private readonly clickIds: ClickIds;
  /** The conversions not yet published, for the platform to relay. */
  readonly outbox: Outbox;

  constructor(
    pg: Pool,
    publisher: Publisher,
    log: Logger,
    clickIds: ClickIds,
  ) {
    this.pg = pg;
    this.publisher = publisher;
    this.log = log;
    this.clickIds = clickIds;
    this.outbox = outboxRelay<ConversionEvent>(
      {
        name: 'conversions',
        pending: (ageMs, limit) => this.pending(ageMs, limit),
        publish: (events) => this.publish(events),
        idOf: (e) => e.conversionId,
        backlog: async () => (await this.pg.query<{ n: number }>('SELECT count(*)::int AS n FROM conversions WHERE published_at IS NULL')).rows[0]!.n,
      },
      log,
    );
  }

  /** Records a conversion or tracked click; a repeat of an idempotency key returns the first record with duplicate: true. */
  async track(workspaceId: string, input: TrackInput): Promise<ConversionResult> {
    if (!CLICK_ID_FORMAT.test(input.clickId)) return refuse({ reason: 'click_id_malformed' });
    const claims = this.clickIds.verify(input.clickId);
    if (!claims) return refuse({ reason: 'click_id_unknown', linkGone: false });
    if (claims.workspaceId !== workspaceId) return refuse({ reason: 'click_id_other_workspace' });
    const type = input.type ?? 'conversion';
    const revenue = revenueOf(input, type);
    if ('ok' in revenue) return revenue;
    const { amountMicros, currency } = revenue;
    const badKey = Object.keys(input.metadata ?? {}).find((k) => !METADATA_KEY.test(k));
    if (badKey !== undefined) return refuse({ reason: 'invalid_metadata_key', key: badKey });
    const metadata = Object.fromEntries(Object.entries(input.metadata ?? {}).map(([k, v]) => [k, String(v)]));
    if (Buffer.byteLength(JSON.stringify(metadata)) > MAX_METADATA_BYTES) return refuse({ reason: 'metadata_too_large', maxBytes: MAX_METADATA_BYTES });

    const link = await this.pg.query<{ campaign_id: string | null }>('SELECT campaign_id FROM links WHERE id = $1 AND workspace_id = $2', [claims.linkId, workspaceId]);
    if (!link.rows[0]) return refuse({ reason: 'click_id_unknown', linkGone: true });

    const event: ConversionEvent = {
      conversionId: randomUUID(),
      type,
      event: input.event ?? type,
      workspaceId,
      linkId: claims.linkId,
      scanId: claims.scanId,
      clickId: input.clickId,
      campaignId: link.rows[0].campaign_id,
      timestamp: Date.now(),
      amountMicros,
      currency,
      // A tracked click is recorded once per scan unless the caller keys it otherwise.
      externalId: input.externalId ?? (type === 'click' ? claims.scanId : null),
      metadata,
    };
    const inserted = await this.pg.query<ConversionRow>(
      `INSERT INTO conversions (id, workspace_id, type, event, external_id, record, created_at) VALUES ($1, $2, $3, $4, $5, $6, to_timestamp($7::double precision / 1000))
       ON CONFLICT (workspace_id, type, event, external_id) WHERE external_id IS NOT NULL DO NOTHING
       RETURNING id, record, created_at`,
      [event.conversionId, workspaceId, type, event.event, event.externalId, event, event.timestamp],
    );
    if (!inserted.rows[0]) {
      const first = await this.pg.query<ConversionRow>(
        'SELECT id, record, created_at FROM conversions WHERE workspace_id = $1 AND type = $2 AND event = $3 AND external_id = $4',
        [workspaceId, type, event.event, event.externalId],
      );
      return { ok: true, conversion: toConversion(first.rows[0]!, true) };
    }
    await this.publishSoon([event]);
    return { ok: true, conversion: toConversion(inserted.rows[0], false) };
  }

  /** Publishes and marks these conversions; never fails the caller: the relay retries what is left. */
  private async publishSoon(events: ConversionEvent[], timeoutMs = 2000): Promise<void> {
    await bestEffort(this.publish(events), timeoutMs, (err) => this.log.warn({ err }, 'conversion publish failed; the relay will retry'));
  }

  private async publish(events: ConversionEvent[]): Promise<void> {
    await this.publisher.publish(conversionsTopic, events.map((e) => ({ key: e.workspaceId, value: e })));
    await this.pg.query('UPDATE conversions SET published_at = now() WHERE id = ANY($1::uuid[])', [events.map((e) => e.conversionId)]);
  }

  /** Conversions committed more than `ageMs` ago and not yet published, oldest first. */
  private async pending(ageMs: number, limit: number): Promise<ConversionEvent[]> {
    const { rows } = await this.pg.query<{ record: ConversionEvent }>(
      `SELECT record FROM conversions WHERE published_at IS NULL AND created_at < now() - make_interval(secs => $1::double precision / 1000)
        ORDER BY created_at LIMIT $2`,
      [ageMs, limit],
    );
    return rows.map((r) => r.record);
  }
}
