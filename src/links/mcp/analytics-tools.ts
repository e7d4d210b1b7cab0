// MCP tools over scan analytics: get_analytics, get_report and get_referrers.
// Windows are trailing days (`daysBack`) ending at the end of the current hour,
// whole UTC hours as in REST; the numbers come from the same queries as
// GET /api/v1/analytics (and, for conversions, GET /api/v1/analytics/funnel).
import { Type, type TSchema } from '@sinclair/typebox';
import { StringEnum } from '../../platform/http/schema-types.ts';
import { defineTool, READ_ONLY, withDefault } from '../../platform/mcp/tool.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { AnalyticsQueries } from '../analytics/analytics-queries.ts';
import { Analytics, TimeBucket, WorkspaceAnalyticsQuery } from '../analytics/analytics-schemas.ts';
import { linksByShortId, scanAnalytics } from '../analytics/scan-analytics.ts';
import type { CampaignStore } from '../campaigns/campaign-store.ts';
import { Funnel } from '../conversions/conversion-schemas.ts';
import { scopeOrRefused } from '../conversions/conversion-refusals.ts';
import type { FunnelQueries } from '../conversions/funnel-query.ts';
import type { LinkStore } from '../short-links/link-store.ts';
import { checkScope, trailingRange, windowOf } from './analytics-window.ts';
import { count, daysBack, describedFor, domainArg, includeBots, percent, scopeArgs, top, Window } from './tool-schemas.ts';
import { domainFilter, domainName } from '../short-links/link-domain.ts';

const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] as const;

export interface AnalyticsToolDeps {
  queries: AnalyticsQueries;
  pg: Pool;
  links: LinkStore;
  campaigns: CampaignStore;
  funnels: FunnelQueries;
}

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const scanRow = TimeBucket.properties;

/** Fraction of part in whole, to 4 decimals (0 of nothing). */
const share = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000);

export function analyticsTools(deps: AnalyticsToolDeps) {
  const getAnalytics = defineTool({
    name: 'get_analytics',
    title: 'Scan and conversion analytics',
    description:
      'Scans and conversions over the last `daysBack` days (default 30) for the whole workspace, one link (`linkId`), one campaign (`campaignId`) or the links on one domain (`domain`): ' +
      'total scans, unique visitors, tracked clicks, conversions, conversion rate and revenue by currency, a trend series (hourly buckets up to 2 days, ' +
      'daily up to 92, weekly beyond), the top links, countries, devices and referrers, and for A/B test links the scans and conversions per variant. Bots are left out unless `includeBots`. With a campaign, ' +
      'scans and conversions count the links in it now. Times are UTC.',
    input: Type.Object(
      { daysBack, ...scopeArgs, domain: domainArg, includeBots, top: top(20, 5, 'Entries in each top list, 1 to 20; default 5.') },
      { additionalProperties: false },
    ),
    output: Type.Object({
      window: Window,
      scope: Type.Object({ linkId: Nullable(Type.String()), campaignId: Nullable(Type.String()), domain: Nullable(Type.String()) }),
      scans: Type.Object({ total: Analytics.properties.totalScans, uniqueVisitors: Analytics.properties.uniqueVisitors }),
      // The REST funnel's counts of the window.
      conversions: Type.Pick(Funnel, ['trackedClicks', 'conversions', 'convertedScans', 'conversionRate', 'revenue']),
      // The REST time series, with the conversion steps of each bucket.
      series: Type.Array(Type.Object({ ...scanRow, trackedClicks: Funnel.properties.trackedClicks, conversions: Funnel.properties.conversions })),
      topLinks: Analytics.properties.topLinks,
      countries: Analytics.properties.countries,
      devices: Analytics.properties.devices,
      referrers: Analytics.properties.referrers,
      // The REST funnel's steps per A/B variant.
      variants: Funnel.properties.variants,
    }),
    annotations: READ_ONLY,
    async run(args, ctx) {
      const scope = { linkId: args.linkId, campaignId: args.campaignId, ...(args.domain === undefined ? {} : { domain: domainFilter(args.domain, deps.links.baseHost) }) };
      // Checked and resolved once for the two conversion queries (404 for ids that are not the workspace's).
      const resolved = scopeOrRefused(await deps.funnels.resolveScope(ctx.tenantId, { linkId: args.linkId, campaignId: args.campaignId, domain: args.domain }));
      const range = trailingRange(args.daysBack);
      const [scans, funnel, conversionSeries] = await Promise.all([
        scanAnalytics(deps, ctx.tenantId, range, scope, args.includeBots, args.top),
        deps.funnels.funnel(ctx.tenantId, { from: range.from.getTime(), to: range.to.getTime() }, resolved, args.includeBots),
        deps.funnels.conversionSeries(ctx.tenantId, range, resolved, args.includeBots),
      ]);
      const conversionsAt = new Map(conversionSeries.map((p) => [Date.parse(p.t), p]));
      const series = scans.timeseries.map((p) => ({
        start: p.start,
        scans: p.scans,
        uniqueVisitors: p.uniqueVisitors,
        trackedClicks: conversionsAt.get(Date.parse(p.start))?.trackedClicks ?? 0,
        conversions: conversionsAt.get(Date.parse(p.start))?.conversions ?? 0,
      }));
      const result = {
        window: windowOf(range, args.daysBack),
        scope: { linkId: args.linkId ?? null, campaignId: args.campaignId ?? null, domain: resolved.domain },
        scans: { total: scans.totalScans, uniqueVisitors: scans.uniqueVisitors },
        conversions: {
          trackedClicks: funnel.trackedClicks,
          conversions: funnel.conversions,
          convertedScans: funnel.convertedScans,
          conversionRate: funnel.conversionRate,
          revenue: funnel.revenue,
        },
        series,
        topLinks: scans.topLinks,
        countries: scans.countries,
        devices: scans.devices,
        referrers: scans.referrers,
        variants: funnel.variants,
      };
      return { summary: analyticsSummary(result), result };
    },
  });

  const getReport = defineTool({
    name: 'get_report',
    title: 'Per-link performance report',
    description:
      'A performance report over the last `daysBack` days (default 30): the top links by scans (with short ID, destination, campaign and share of all ' +
      'scans), the top campaigns by the scans of their links, and a weekday × hour-of-day heatmap of scans in UTC with its busiest hour. Bots are left ' +
      'out unless `includeBots`. For conversions of a link, use get_funnel with its linkId.',
    input: Type.Object(
      { daysBack, top: top(25, 10, 'Links and campaigns to list, 1 to 25; default 10.'), includeBots },
      { additionalProperties: false },
    ),
    output: Type.Object({
      window: Window,
      totalScans: Type.Integer(),
      topLinks: Type.Array(Type.Object({
        linkId: Nullable(Type.String()),
        shortId: Type.String(),
        destination: Nullable(Type.String()),
        campaignId: Nullable(Type.String()),
        scans: Type.Integer(),
        share: Type.Number({ description: 'Fraction of all scans in the window (0 to 1).' }),
      })),
      topCampaigns: Type.Array(Type.Object({
        campaignId: Type.String(),
        name: Type.String(),
        scans: Type.Integer({ description: 'Scans of the links in the campaign now.' }),
        share: Type.Number(),
        scannedLinks: Type.Integer({ description: 'Links of the campaign scanned in the window.' }),
      })),
      scansOutsideCampaigns: Type.Integer(),
      heatmap: Type.Object({
        timezone: Type.Literal('UTC'),
        days: Type.Array(Type.Object({ weekday: StringEnum(WEEKDAYS), total: Type.Integer(), byHour: Type.Array(Type.Integer(), { description: '24 counts, hour 0 to 23.' }) })),
        peak: Type.Union([Type.Object({ weekday: StringEnum(WEEKDAYS), hour: Type.Integer(), scans: Type.Integer() }), Type.Null()], { description: 'The busiest weekday and hour; null without scans.' }),
      }),
    }),
    annotations: READ_ONLY,
    async run(args, ctx) {
      const range = trailingRange(args.daysBack);
      const [linkScans, cells] = await Promise.all([
        deps.queries.linkScans(ctx.tenantId, range, args.includeBots),
        deps.queries.weekdayHourScans(ctx.tenantId, range, args.includeBots),
      ]);
      const links = await linksByShortId(deps.pg, ctx.tenantId, linkScans.map((l) => l.shortId));
      const totalScans = linkScans.reduce((n, l) => n + l.scans, 0);

      const topLinks = linkScans.slice(0, args.top).map((l) => {
        const link = links.get(l.shortId);
        return { linkId: link?.id ?? null, shortId: l.shortId, destination: link?.destination ?? null, campaignId: link?.campaignId ?? null, scans: l.scans, share: share(l.scans, totalScans) };
      });

      // Campaigns by the scans of the links they hold now (as the REST campaign filter counts them).
      const byCampaign = new Map<string, { scans: number; scannedLinks: number }>();
      let scansOutsideCampaigns = 0;
      for (const l of linkScans) {
        const campaignId = links.get(l.shortId)?.campaignId;
        if (!campaignId) {
          scansOutsideCampaigns += l.scans;
          continue;
        }
        const sum = byCampaign.get(campaignId) ?? { scans: 0, scannedLinks: 0 };
        sum.scans += l.scans;
        sum.scannedLinks += 1;
        byCampaign.set(campaignId, sum);
      }
      const ranked = [...byCampaign].sort((a, b) => b[1].scans - a[1].scans || (a[0] < b[0] ? -1 : 1)).slice(0, args.top);
      const topCampaigns = [];
      for (const [campaignId, sum] of ranked) {
        const campaign = await deps.campaigns.get(ctx.tenantId, campaignId);
        topCampaigns.push({ campaignId, name: campaign?.name ?? '', scans: sum.scans, share: share(sum.scans, totalScans), scannedLinks: sum.scannedLinks });
      }

      const days = WEEKDAYS.map((weekday) => ({ weekday, total: 0, byHour: Array.from({ length: 24 }, () => 0) }));
      let peak: { weekday: (typeof WEEKDAYS)[number]; hour: number; scans: number } | null = null;
      // In weekday and hour order, so that of equal cells the earliest is the peak.
      for (const cell of [...cells].sort((a, b) => a.weekday - b.weekday || a.hour - b.hour)) {
        const day = days[cell.weekday - 1];
        if (!day) continue;
        day.byHour[cell.hour] = cell.scans;
        day.total += cell.scans;
        if (!peak || cell.scans > peak.scans) peak = { weekday: day.weekday, hour: cell.hour, scans: cell.scans };
      }

      const result = { window: windowOf(range, args.daysBack), totalScans, topLinks, topCampaigns, scansOutsideCampaigns, heatmap: { timezone: 'UTC' as const, days, peak } };
      const lines = [
        `${count(totalScans)} scans in the last ${args.daysBack} day${args.daysBack === 1 ? '' : 's'} (${result.window.from} to ${result.window.to}).`,
        ...(topLinks.length ? ['Top links:', ...topLinks.map((l) => `- ${l.shortId}${l.linkId ? ` (id ${l.linkId})` : ''}: ${count(l.scans)} scans (${percent(l.scans, totalScans)})`)] : []),
        ...(topCampaigns.length ? ['Top campaigns:', ...topCampaigns.map((c) => `- ${c.name} (id ${c.campaignId}): ${count(c.scans)} scans (${percent(c.scans, totalScans)})`)] : []),
        ...(peak ? [`Busiest hour: ${peak.weekday} ${String(peak.hour).padStart(2, '0')}:00–${String(peak.hour + 1).padStart(2, '0')}:00 UTC (${count(peak.scans)} scans).`] : []),
      ];
      return { summary: lines.join('\n'), result };
    },
  });

  const getReferrers = defineTool({
    name: 'get_referrers',
    title: 'Top referrers',
    description:
      'The sites that sent scans over the last `daysBack` days (default 30), by referring host, most scans first, for the workspace, one link ' +
      '(`linkId`) or the links on one domain (`domain`). "(direct)" counts scans without a referrer (QR codes, apps, typed URLs). Bots are left out unless `includeBots`.',
    input: Type.Object(
      {
        daysBack,
        linkId: scopeArgs.linkId,
        domain: domainArg,
        top: withDefault(describedFor(WorkspaceAnalyticsQuery.properties.top, 'Referrers to list, 1 to 100; default 10.')),
        includeBots,
      },
      { additionalProperties: false },
    ),
    output: Type.Object({
      window: Window,
      linkId: Nullable(Type.String()),
      domain: Nullable(Type.String()),
      totalScans: Type.Integer(),
      referrers: Type.Array(Type.Object({
        referrer: Analytics.properties.referrers.items.properties.referrer,
        scans: Type.Integer(),
        share: Type.Number({ description: 'Fraction of totalScans (0 to 1).' }),
      })),
    }),
    annotations: READ_ONLY,
    async run(args, ctx) {
      await checkScope(deps, ctx, { linkId: args.linkId });
      const range = trailingRange(args.daysBack);
      const scope = { linkId: args.linkId, ...(args.domain === undefined ? {} : { domain: domainFilter(args.domain, deps.links.baseHost) }) };
      const scans = await scanAnalytics(deps, ctx.tenantId, range, scope, args.includeBots, args.top);
      const referrers = scans.referrers.map((r) => ({ referrer: r.referrer, scans: r.count, share: share(r.count, scans.totalScans) }));
      const result = { window: windowOf(range, args.daysBack), linkId: args.linkId ?? null, domain: args.domain === undefined ? null : domainName(args.domain), totalScans: scans.totalScans, referrers };
      const summary = referrers.length === 0
        ? `No scans in the last ${args.daysBack} days.`
        : [`Top referrers of ${count(scans.totalScans)} scans in the last ${args.daysBack} days:`, ...referrers.map((r) => `- ${r.referrer}: ${count(r.scans)} (${percent(r.scans, scans.totalScans)})`)].join('\n');
      return { summary, result };
    },
  });

  return [getAnalytics, getReport, getReferrers];
}

interface AnalyticsSummaryInput {
  window: { daysBack: number };
  scans: { total: number; uniqueVisitors: number };
  conversions: { trackedClicks: number; conversions: number; conversionRate: number; revenue: { currency: string; amount: number; amountExact: string }[] };
  series: { scans: number }[];
  topLinks: { shortId: string; scans: number }[];
}

/** Totals, the direction of the trend (second half of the window against the first) and the top link. */
function analyticsSummary(r: AnalyticsSummaryInput): string {
  const half = Math.floor(r.series.length / 2);
  const first = r.series.slice(0, half).reduce((n, p) => n + p.scans, 0);
  const second = r.series.slice(r.series.length - half).reduce((n, p) => n + p.scans, 0);
  const trend = first === 0 ? (second === 0 ? 'no scans' : 'scans only in the second half') : `${second >= first ? 'up' : 'down'} ${percent(Math.abs(second - first), first)} in the second half against the first`;
  const revenue = r.conversions.revenue.map((x) => `${x.amountExact} ${x.currency}`).join(', ');
  return [
    `Last ${r.window.daysBack} day${r.window.daysBack === 1 ? '' : 's'}: ${count(r.scans.total)} scans by about ${count(r.scans.uniqueVisitors)} visitors (trend: ${trend}).`,
    `${count(r.conversions.trackedClicks)} tracked clicks, ${count(r.conversions.conversions)} conversions (conversion rate ${percent(r.conversions.conversionRate, 1)})${revenue ? `, revenue ${revenue}` : ''}.`,
    ...(r.topLinks[0] ? [`Top link: ${r.topLinks[0].shortId} with ${count(r.topLinks[0].scans)} scans.`] : []),
  ].join('\n');
}
