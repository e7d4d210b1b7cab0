// MCP tools over conversions: get_funnel and track_conversion, through the same
// FunnelQueries and Conversions as GET /api/v1/analytics/funnel and POST /api/v1/track,
// with the REST track body as track_conversion's arguments and the REST records as results.
import { Type } from '@sinclair/typebox';
import { CREATES, defineTool, READ_ONLY } from '../../platform/mcp/tool.ts';
import { Conversion, Funnel, TrackBody } from '../conversions/conversion-schemas.ts';
import type { Conversions } from '../conversions/conversions.ts';
import { conversionOrRefused, scopeOrRefused } from '../conversions/conversion-refusals.ts';
import type { FunnelQueries } from '../conversions/funnel-query.ts';
import { trailingRange, windowOf } from './analytics-window.ts';
import { count, daysBack, domainArg, includeBots, percent, scopeArgs, Window } from './tool-schemas.ts';

export interface ConversionToolDeps {
  conversions: Conversions;
  funnels: FunnelQueries;
}

export function conversionTools(deps: ConversionToolDeps) {
  const getFunnel = defineTool({
    name: 'get_funnel',
    title: 'Scan → click → conversion funnel',
    description:
      'The funnel over the last `daysBack` days (default 30) for the workspace, one link (`linkId`), one campaign (`campaignId`) or the links on one domain (`domain`): scans, tracked ' +
      'clicks (scans whose visitor was reported landing on the destination), converted scans and conversions, the click and conversion rates, and ' +
      'revenue per currency, and the same steps per A/B test variant (`variants`, for links with testVariants). Each step counts what happened in the window; ' +
      'a campaign means the links in it now. Bots are left out of scans unless `includeBots`.',
    input: Type.Object({ daysBack, ...scopeArgs, domain: domainArg, includeBots }, { additionalProperties: false }),
    // The REST funnel, with the window in place of from and to.
    output: Type.Object({ window: Window, ...Type.Omit(Funnel, ['object', 'from', 'to']).properties }),
    annotations: READ_ONLY,
    async run(args, ctx) {
      const scope = scopeOrRefused(await deps.funnels.resolveScope(ctx.tenantId, { linkId: args.linkId, campaignId: args.campaignId, domain: args.domain }));
      const range = trailingRange(args.daysBack);
      const f = await deps.funnels.funnel(ctx.tenantId, { from: range.from.getTime(), to: range.to.getTime() }, scope, args.includeBots);
      const result = {
        window: windowOf(range, args.daysBack),
        linkId: f.linkId,
        campaignId: f.campaignId,
        domain: f.domain,
        scans: f.scans,
        trackedClicks: f.trackedClicks,
        convertedScans: f.convertedScans,
        conversions: f.conversions,
        clickRate: f.clickRate,
        conversionRate: f.conversionRate,
        revenue: f.revenue,
        variants: f.variants,
      };
      const revenue = f.revenue.map((r) => `${r.amountExact} ${r.currency} from ${count(r.conversions)} conversion${r.conversions === 1 ? '' : 's'}`).join('; ');
      const summary = [
        `Funnel, last ${args.daysBack} day${args.daysBack === 1 ? '' : 's'}: ${count(f.scans)} scans → ${count(f.trackedClicks)} tracked clicks (${percent(f.trackedClicks, f.scans)}) → ` +
          `${count(f.convertedScans)} converted scans (${percent(f.convertedScans, f.scans)}); ${count(f.conversions)} conversions in all.`,
        revenue ? `Revenue: ${revenue}.` : 'No revenue recorded.',
        ...f.variants.map((v) => `A/B variant ${v.variant}: ${count(v.scans)} scans, ${count(v.convertedScans)} converted (${percent(v.convertedScans, v.scans)}).`),
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
    input: TrackBody,
    output: Type.Object({ conversion: Conversion }),
    annotations: CREATES,
    async run(args, ctx) {
      const conversion = conversionOrRefused(await deps.conversions.track(ctx.tenantId, args));
      const what = `${conversion.type === 'click' ? 'tracked click' : `conversion "${conversion.event}"`}${conversion.amount !== null ? ` of ${conversion.amount} ${conversion.currency}` : ''}`;
      const summary = conversion.duplicate
        ? `Already recorded: ${what} (externalId ${conversion.externalId}); nothing new was recorded.`
        : `Recorded ${what} for link ${conversion.linkId} (scan ${conversion.scanId}).`;
      return { summary, result: { conversion } };
    },
  });

  return [getFunnel, trackConversion];
}
