// Paths of Resend's SDK that this service does not offer: those one path segment
// long would otherwise fall into the link product's GET /:shortId and its HTML
// 404, which the SDK reports as an "Internal server error" (application_error),
// and the rest into a bare route_not_found. Here they answer 404 not_found in
// Resend's shape, saying what to use instead, and their first segments are
// reserved like every root path (no short link can take them). The paths are
// the SDK's own (resend 6.38: oauthGrants calls /oauth/grants).
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../platform/http/errors.ts';
import type { App } from '../../platform/http/server.ts';
import { RESEND_ERRORS, resendErrorResponses } from './resend-errors.ts';

const NOT_OFFERED = [
  { method: 'GET', url: '/automations', operationId: 'resendListAutomationsNotOffered', instead: 'automations are /api/v1/automations' },
  { method: 'POST', url: '/automations', operationId: 'resendCreateAutomationNotOffered', instead: 'automations are /api/v1/automations' },
  { method: 'GET', url: '/events', operationId: 'resendListEventsNotOffered', instead: 'events are posted to POST /events (or /events/send) and start automations; they are not listed' },
  { method: 'GET', url: '/logs', operationId: 'resendListLogsNotOffered', instead: 'request logs are not kept; GET /emails lists what was sent' },
  { method: 'GET', url: '/usage', operationId: 'resendGetUsageNotOffered', instead: 'usage is not reported; GET /api/v1/broadcasts/:id/report counts a broadcast' },
  { method: 'GET', url: '/oauth/grants', operationId: 'resendListOauthGrantsNotOffered', instead: 'there is no OAuth; mail API keys are managed at /api-keys' },
  { method: 'DELETE', url: '/oauth/grants/:id', operationId: 'resendRevokeOauthGrantNotOffered', instead: 'there is no OAuth; mail API keys are managed at /api-keys' },
] as const;

export async function resendNotOfferedRoutes(app: App): Promise<void> {
  for (const route of NOT_OFFERED) {
    app.route({
      method: route.method,
      url: route.url,
      // Every kind of key gets the same refusal.
      config: { mailAccess: 'reports' },
      schema: {
        tags: ['resend-not-offered'], operationId: route.operationId, summary: `Not offered: ${route.instead}`,
        description: 'Answers 404 not_found (error.code not_offered) in Resend\'s shape, so Resend\'s SDK reports it as such.',
        ...(route.method === 'POST' ? { body: Type.Unknown() } : {}),
        response: resendErrorResponses(...RESEND_ERRORS, 404),
      },
      handler: async () => {
        throw new ApiError(404, 'not_offered', `${route.method} ${route.url} is not offered by this service: ${route.instead}.`);
      },
    });
  }
}
