// /api/v1/broadcasts (SEND and FULL keys; the report also TEST keys): create, list,
// get, send, cancel, decide, resend and the report (spec: email-broadcast-api.md),
// through broadcast-operations.ts.
import { addComponents } from '../../platform/http/components.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import { MAIL_BODY_ERRORS, MAIL_ERRORS, mailErrorResponses } from '../http/mail-errors.ts';
import { IdParams } from '../http/mail-schemas.ts';
import { LIST_LIMIT } from './broadcasts.ts';
import { BroadcastReport } from './broadcast-report.ts';
import { BroadcastList, BroadcastPageQuery, BroadcastSchema, CreateBody, ResendBroadcastBody, SendBroadcastBody } from './broadcast-schemas.ts';
import {
  cancelBroadcast, createBroadcast, decideBroadcast, getBroadcast, getBroadcastReport, listBroadcasts, resendBroadcast, sendBroadcast, type BroadcastOperationDeps,
} from './broadcast-operations.ts';

/** Bodies that may hold html and text of 2 MB each, escaped as JSON. */
const BODY_LIMIT = 12 * 1024 * 1024;
export type BroadcastRouteDeps = BroadcastOperationDeps;

export async function broadcastRoutes(app: App, deps: BroadcastRouteDeps): Promise<void> {
  const { broadcasts } = deps;
  const tags = ['broadcasts'];
  const config = { mailAccess: 'broadcasts' as const };
  addComponents(app, [BroadcastSchema, BroadcastList, BroadcastReport]);

  app.post('/broadcasts', {
    config,
    bodyLimit: BODY_LIMIT,
    schema: {
      tags, operationId: 'createBroadcast', summary: 'Create a broadcast (a draft, or scheduled with scheduled_at)',
      body: CreateBody,
      response: { 201: withRateLimitHeaders(BroadcastSchema, 'The new broadcast.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 404, 422) },
    },
  }, async (request, reply) => reply.status(201).send(await createBroadcast(deps, request.mailAuth, request.body)));

  app.get('/broadcasts', {
    config,
    schema: {
      tags, operationId: 'listBroadcasts', summary: `List broadcasts (up to ${LIST_LIMIT} a page, newest first)`,
      description: 'A page of broadcasts; `next_cursor`, passed back as `cursor`, gives the next (null on the last page).',
      querystring: BroadcastPageQuery,
      response: { 200: withRateLimitHeaders(BroadcastList, 'A page of broadcasts, newest first.'), ...mailErrorResponses(...MAIL_ERRORS, 400) },
    },
  }, async (request) => listBroadcasts(broadcasts, request.mailAuth, request.query));

  const action = (operationId: string, summary: string, description: string) => ({
    config,
    schema: {
      tags, operationId, summary, description, params: IdParams,
      response: { 200: withRateLimitHeaders(BroadcastSchema, 'The broadcast.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 404, 409) },
    },
  });

  app.get('/broadcasts/:id', {
    config,
    schema: { tags, operationId: 'getBroadcast', summary: 'Get a broadcast', params: IdParams, response: { 200: withRateLimitHeaders(BroadcastSchema, 'The broadcast.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => getBroadcast(broadcasts, request.mailAuth, request.params.id));

  const send = action('sendBroadcast', 'Send a draft or scheduled broadcast now, or schedule it', 'With `scheduled_at`: scheduled for then (a new time replaces the pending one). Without (no body, or `{}`): sending starts now; the worker begins within a second.');
  app.post('/broadcasts/:id/send', {
    ...send,
    preValidation: noBodyIsEmpty,
    schema: { ...send.schema, body: SendBroadcastBody },
  }, async (request) => sendBroadcast(broadcasts, request.mailAuth, request.params.id, request.body.scheduled_at));

  const cancel = action('cancelBroadcast', 'Cancel a broadcast', 'Any state but sent and canceled. Pending jobs are removed; a sending broadcast stops at its next batch of 500 recipients (messages already queued still go out).');
  app.post('/broadcasts/:id/cancel', cancel, async (request) => cancelBroadcast(broadcasts, request.mailAuth, request.params.id));

  const decideRoute = action('decideBroadcast', 'Pick the A/B winner now', 'Only in testing. The decision is queued at once; the status stays testing until the worker writes ab_winner and ab_decided_at, then it sends the rest.');
  app.post('/broadcasts/:id/decide', decideRoute, async (request) => decideBroadcast(broadcasts, request.mailAuth, request.params.id));

  app.post('/broadcasts/:id/resend', {
    config,
    preValidation: noBodyIsEmpty,
    schema: {
      tags, operationId: 'resendBroadcast', summary: 'Resend a sent broadcast to its non-openers',
      description: 'A child broadcast (draft, or scheduled with scheduled_at) copying content, topic and segment, without subject B; its audience is the parent\'s recipients with no open or click when it fans out.',
      params: IdParams,
      body: ResendBroadcastBody,
      response: { 201: withRateLimitHeaders(BroadcastSchema, 'The child broadcast.'), ...mailErrorResponses(...MAIL_BODY_ERRORS, 404, 409, 422) },
    },
  }, async (request, reply) => reply.status(201).send(await resendBroadcast(broadcasts, request.mailAuth, request.params.id, request.body)));

  app.get('/broadcasts/:id/report', {
    config: { mailAccess: 'reports' as const },
    schema: { tags, operationId: 'getBroadcastReport', summary: 'The report of a broadcast (sends no mail)', params: IdParams, response: { 200: withRateLimitHeaders(BroadcastReport, 'Counts, rates, variants and top links.'), ...mailErrorResponses(...MAIL_ERRORS, 404) } },
  }, async (request) => getBroadcastReport(deps, request.mailAuth, request.params.id));
}

/** A request without a body is one with `{}` (spec: "send with empty body or {}"). */
async function noBodyIsEmpty(request: { body: unknown }): Promise<void> {
  request.body ??= {};
}
