// REST routes of conversion tracking and the funnel.
import { ApiError } from '../../platform/http/errors.ts';
import { addComponents, ref } from '../../platform/http/components.ts';
import { API_BODY_ERRORS, API_ERRORS, errorResponses, withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import { MAX_RANGE_DAYS, rawRange } from '../analytics/time-range.ts';
import { Conversion, CONVERSION_COMPONENTS, Funnel, FunnelQuery, idempotencyKey, TrackBody, TrackHeaders } from './conversion-schemas.ts';
import type { Conversions } from './conversions.ts';
import { conversionOrRefused, scopeOrRefused } from './conversion-refusals.ts';
import type { FunnelQueries } from './funnel-query.ts';

const DAY = 86_400_000;

export async function conversionRoutes(app: App, deps: { conversions: Conversions; funnels: FunnelQueries }): Promise<void> {
  addComponents(app, CONVERSION_COMPONENTS);
  app.post('/track', {
    schema: {
      tags: ['conversions'],
      operationId: 'trackConversion',
      summary: 'Record a conversion or a tracked click for a click ID',
      description:
        'Send the `svc_cid` value the destination received. `type: "click"` records that the visitor landed (once per scan unless you key it yourself); ' +
        '`type: "conversion"` (default) records a goal, with optional revenue. With `externalId` or an `Idempotency-Key` header (the header wins), a repeat records nothing new and answers 200 with the first record and `duplicate: true`: send one whenever you may retry. ' +
        'Errors: `click_id_malformed` (400), `click_id_unknown` (404: not issued by this service), `click_id_other_workspace` (403), `unknown_currency`, `currency_required`, `amount_required`, `amount_not_allowed`, `amount_too_precise`, `invalid_metadata_key`, `metadata_too_large` (400).',
      body: ref(TrackBody),
      headers: TrackHeaders,
      response: {
        201: withRateLimitHeaders(Conversion, 'Recorded.'),
        200: withRateLimitHeaders(Conversion, 'A repeat of an earlier externalId or Idempotency-Key: nothing new recorded.'),
        ...errorResponses(...API_BODY_ERRORS, 404),
      },
    },
  }, async (request, reply) => {
    const externalId = idempotencyKey(request.headers['idempotency-key'], request.body);
    const conversion = conversionOrRefused(await deps.conversions.track(request.linksAuth.workspaceId, { ...request.body, ...(externalId === undefined ? {} : { externalId }) }));
    return reply.status(conversion.duplicate ? 200 : 201).send(conversion);
  });

  app.get('/analytics/funnel', {
    schema: {
      tags: ['analytics', 'conversions'],
      operationId: 'getFunnel',
      summary: 'Scan → tracked click → conversion funnel',
      description: 'Counts over a range (default the last 30 days), for the workspace, one link, one campaign or the links on one domain, with revenue summed per currency (and per A/B test variant).',
      querystring: FunnelQuery,
      response: { 200: withRateLimitHeaders(Funnel, 'The funnel.'), ...errorResponses(...API_ERRORS) },
    },
  }, async (request) => {
    const q = request.query;
    const { from, to } = rawRange(q);
    if (to - from > MAX_RANGE_DAYS * DAY) throw new ApiError(400, 'invalid_range', `The range may span at most ${MAX_RANGE_DAYS} days.`, [{ path: '/from', message: 'range too long' }]);
    const scope = scopeOrRefused(await deps.funnels.resolveScope(request.linksAuth.workspaceId, { linkId: q.linkId, campaignId: q.campaignId, domain: q.domain }));
    return deps.funnels.funnel(request.linksAuth.workspaceId, { from, to }, scope, q.includeBots ?? false);
  });
}
