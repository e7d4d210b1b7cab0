// Records conversions and tracked clicks for a scan's click ID. The click ID is
// a signed token (click-id.ts), so it is checked here without waiting for the
// scan to reach any store. The Postgres row is the idempotency record and the
// outbox: it commits first, is then published to the `conversions` topic, and
// the platform's outbox relay publishes what a crash or a Kafka outage left
// behind, in one batch.
import { randomUUID } from 'node:crypto';
import { bestEffort } from '../../platform/background.ts';
import { ApiError } from '../../platform/http/errors.ts';
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

const invalid = (code: string, message: string, field?: string) =>
  new ApiError(400, code, message, field ? [{ path: `/${field}`, message }] : undefined);

/** Amount and currency, checked: both or neither, a known currency, at most six decimals. */
function revenueOf(input: TrackInput, type: string): { amountMicros: number | null; currency: string | null } {
  if (input.amount === undefined && input.currency === undefined) return { amountMicros: null, currency: null };
  if (type === 'click') throw invalid('amount_not_allowed', 'A tracked click carries no revenue; send amount and currency with a conversion.', 'amount');
  if (input.amount === undefined) throw invalid('amount_required', 'currency was given without amount.', 'amount');
  if (input.currency === undefined) throw invalid('currency_required', 'amount needs an ISO 4217 currency, e.g. "EUR".', 'currency');
  const currency = input.currency.toUpperCase();
  if (!CURRENCIES.has(currency)) throw invalid('unknown_currency', `${input.currency} is not an ISO 4217 currency code.`, 'currency');
  const text = String(input.amount);
  const decimals = text.includes('e') ? Infinity : (text.split('.')[1]?.length ?? 0);
  if (decimals > MAX_DECIMALS) throw invalid('amount_too_precise', `amount has more than ${MAX_DECIMALS} decimal places.`, 'amount');
  return { amountMicros: Math.round(input.amount * 1_000_000), currency };
}

export class Conversions {
  /** The conversions not yet published, for the platform to relay. */
  readonly outbox: Outbox;

  constructor(
    private readonly pg: Pool,
    private readonly publisher: Publisher,
    private readonly log: Logger,
    private readonly clickIds: ClickIds,
  ) {
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
  async track(workspaceId: string, input: TrackInput): Promise<ConversionType> {
    if (!CLICK_ID_FORMAT.test(input.clickId)) {
      throw invalid('click_id_malformed', 'clickId is not a click ID: it is the 84-character svc_cid value added to the destination URL.', 'clickId');
    }
    const claims = this.clickIds.verify(input.clickId);
    if (!claims) throw new ApiError(404, 'click_id_unknown', 'This click ID was not issued by this service (its signature does not verify).');
    if (claims.workspaceId !== workspaceId) throw new ApiError(403, 'click_id_other_workspace', 'This click ID belongs to another workspace.');
    const type = input.type ?? 'conversion';
    const { amountMicros, currency } = revenueOf(input, type);
    const badKey = Object.keys(input.metadata ?? {}).find((k) => !METADATA_KEY.test(k));
    if (badKey !== undefined) throw invalid('invalid_metadata_key', `metadata keys are 1 to 64 characters without control characters; "${badKey.slice(0, 80)}" is not.`, 'metadata');
    const metadata = Object.fromEntries(Object.entries(input.metadata ?? {}).map(([k, v]) => [k, String(v)]));
    if (Buffer.byteLength(JSON.stringify(metadata)) > MAX_METADATA_BYTES) throw invalid('metadata_too_large', `metadata is larger than ${MAX_METADATA_BYTES} bytes as JSON.`, 'metadata');

    const link = await this.pg.query<{ campaign_id: string | null }>('SELECT campaign_id FROM links WHERE id = $1 AND workspace_id = $2', [claims.linkId, workspaceId]);
    if (!link.rows[0]) throw new ApiError(404, 'click_id_unknown', 'The link of this click ID no longer exists.');

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
      return toConversion(first.rows[0]!, true);
    }
    await this.publishSoon([event]);
    return toConversion(inserted.rows[0], false);
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
