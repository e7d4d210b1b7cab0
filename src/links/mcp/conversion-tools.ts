// MCP tools over conversions: get_funnel and track_conversion, through the same
// FunnelQueries and Conversions as GET /api/v1/analytics/funnel and POST /api/v1/track.
import { z } from 'zod';
import { compileBodyValidator } from '../../platform/http/validation.ts';
import { TrackBody, TRACK_TYPES, type TrackInput } from '../conversions/conversion-schemas.ts';
import type { Conversions } from '../conversions/conversions.ts';
import type { FunnelQueries } from '../conversions/funnel-query.ts';
import { trailingRange, windowOf } from './analytics-window.ts';
import { CREATES, definedOnly, defineTool, READ_ONLY, throwIfInvalid } from './tool.ts';
import { count, daysBack, includeBots, percent, Revenue, scopeArgs, Window } from './tool-schemas.ts';

const checkTrack = compileBodyValidator(TrackBody);

export interface ConversionToolDeps {
  conversions: Conversions;
  funnels: FunnelQueries;
}

export function conversionTools(deps: ConversionToolDeps) {
  const getFunnel = defineTool({
    name: 'get_funnel',
    title: 'Scan → click → conversion funnel',
    description:
      'The funnel over the last `daysBack` days (default 30) for the workspace, one link (`linkId`) or one campaign (`campaignId`): scans, tracked ' +
      'clicks (scans whose visitor was reported landing on the destination), converted scans and conversions, the click and conversion rates, and ' +
      'revenue per currency. Each step counts what happened in the window; a campaign means the links in it now. Bots are left out of scans unless `includeBots`.',
    input: z.strictObject({
      daysBack,
      ...scopeArgs,
      includeBots,
    }),
    output: z.object({
      window: Window,
      linkId: z.string().nullable(),
      campaignId: z.string().nullable(),
      scans: z.number().int(),
      trackedClicks: z.number().int(),
      convertedScans: z.number().int().describe('Distinct scans with at least one conversion.'),
      conversions: z.number().int(),
      clickRate: z.number().describe('trackedClicks / scans; above 1 when clicks in the window come from scans before it.'),
      conversionRate: z.number().describe('convertedScans / scans; above 1 when conversions in the window come from scans before it.'),
      revenue: z.array(Revenue).describe('Per currency, largest first.'),
    }),
    annotations: READ_ONLY,
    async run(args, ctx) {
      const scope = await deps.funnels.resolveScope(ctx.workspaceId, { linkId: args.linkId, campaignId: args.campaignId });
      const range = trailingRange(args.daysBack);
      const f = await deps.funnels.funnel(ctx.workspaceId, { from: range.from.getTime(), to: range.to.getTime() }, scope, args.includeBots);
      const result = {
        window: windowOf(range, args.daysBack),
        linkId: f.linkId,
        campaignId: f.campaignId,
        scans: f.scans,
        trackedClicks: f.trackedClicks,
        convertedScans: f.convertedScans,
        conversions: f.conversions,
        clickRate: f.clickRate,
        conversionRate: f.conversionRate,
        revenue: f.revenue,
      };
      const revenue = f.revenue.map((r) => `${r.amount} ${r.currency} from ${count(r.conversions)} conversion${r.conversions === 1 ? '' : 's'}`).join('; ');
      const summary = [
        `Funnel, last ${args.daysBack} day${args.daysBack === 1 ? '' : 's'}: ${count(f.scans)} scans → ${count(f.trackedClicks)} tracked clicks (${percent(f.trackedClicks, f.scans)}) → ` +
          `${count(f.convertedScans)} converted scans (${percent(f.convertedScans, f.scans)}); ${count(f.conversions)} conversions in all.`,
        revenue ? `Revenue: ${revenue}.` : 'No revenue recorded.',
      ].join('\n');
      return { summary, result };
    },
  });

  const trackConversion = defineTool({
    name: 'track_conversion',
    title: 'Record a conversion',
    description:
      'Records a conversion (or, with type "click", that the visitor landed) for a scan, identified by its click ID: the `svc_cid` query value our ' +
      'redirect added to the destination URL. Optional: `event` name (e.g. "purchase"), revenue as `amount` with an ISO 4217 `currency`, ' +
      '`externalId` (your order id: a repeat with the same type, event and externalId records nothing new and returns the first record with duplicate ' +
      'true), `metadata`. Errors: click_id_malformed, click_id_unknown, click_id_other_workspace, currency_required, amount_required, unknown_currency, ' +
      'amount_not_allowed (revenue on a click), amount_too_precise, invalid_metadata_key, metadata_too_large.',
    input: z.strictObject({
      clickId: z.string().min(1).max(200).describe('The svc_cid value (84 characters) the destination received with the visitor.'),
      type: z.enum(TRACK_TYPES).optional().describe('"conversion" (default): a goal was reached. "click": the visitor landed on the destination.'),
      event: z.string().min(1).max(64).regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, 'must be letters, digits, "_", ".", ":" or "-", starting with a letter or digit').optional()
        .describe('Event name, e.g. "purchase" or "signup"; default the type.'),
      amount: z.number().min(0).max(1_000_000_000).optional().describe('Revenue in major units (12.5 = twelve and a half), at most 6 decimals; needs currency.'),
      currency: z.string().regex(/^[A-Za-z]{3}$/, 'must be a 3-letter ISO 4217 code').optional().describe('ISO 4217 code such as "EUR" or "USD"; needed with amount.'),
      externalId: z.string().min(1).max(128).optional().describe('Your id for this event (order id): makes the call safe to repeat.'),
      metadata: z.record(z.string().min(1).max(64), z.union([z.string().max(500), z.number(), z.boolean()]))
        .refine((m) => Object.keys(m).length <= 20, 'at most 20 keys').optional()
        .describe('Up to 20 keys (1 to 64 characters) with string (up to 500 characters), number or boolean values; 4 KB in all.'),
    }),
    output: z.object({
      conversion: z.object({
        object: z.literal('conversion'),
        id: z.string(),
        type: z.enum(TRACK_TYPES),
        event: z.string(),
        clickId: z.string(),
        scanId: z.string(),
        linkId: z.string(),
        campaignId: z.string().nullable(),
        amount: z.number().nullable(),
        currency: z.string().nullable(),
        externalId: z.string().nullable(),
        metadata: z.record(z.string(), z.string()),
        createdAt: z.string(),
        duplicate: z.boolean().describe('True when externalId was seen before: nothing new was recorded and this is the first record.'),
      }),
    }),
    annotations: CREATES,
    async run(args, ctx) {
      const input: TrackInput = definedOnly(args);
      throwIfInvalid(checkTrack(input));
      const conversion = await deps.conversions.track(ctx.workspaceId, input);
      const what = `${conversion.type === 'click' ? 'tracked click' : `conversion "${conversion.event}"`}${conversion.amount !== null ? ` of ${conversion.amount} ${conversion.currency}` : ''}`;
      const summary = conversion.duplicate
        ? `Already recorded: ${what} (externalId ${conversion.externalId}); nothing new was recorded.`
        : `Recorded ${what} for link ${conversion.linkId} (scan ${conversion.scanId}).`;
      return { summary, result: { conversion } };
    },
  });

  return [getFunnel, trackConversion];
}
