// GET /api/v1/analytics/stream and /api/v1/links/:id/analytics/stream: a workspace's scans as
// Server-Sent Events, from this ingress's scan hub (scan-hub.ts). A stream holds one of its
// workspace's slots (stream-slots.ts) while open, and ends within LIVE_STREAM_KEY_CHECK_MS of
// its key being revoked (key-watch.ts) or at once when the ingress stops (the hub's endAll).
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { API_ERRORS, errorResponses, RATE_LIMIT_HEADERS } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import type { Redis } from '../../platform/redis.ts';
import type { LinkStore } from '../short-links/link-store.ts';
import { liveStreamLimit } from '../workspaces/plans.ts';
import { clientGone, streamScans } from './event-stream.ts';
import { KeyWatch } from './key-watch.ts';
import { parseCursor } from './live-cursor.ts';
import { LinkStreamQuery, STREAM_DESCRIPTION, WorkspaceStreamQuery } from './live-schemas.ts';
import { InvalidResume, LiveScansUnavailable, type ScanFilter, type ScanHub } from './scan-hub.ts';
import { StreamSlots } from './stream-slots.ts';

export interface LiveRoutesDeps {
  hub: ScanHub;
  links: LinkStore;
  pg: Pool;
  redis: Redis;
  log: Logger;
  heartbeatMs: number;
  maxBufferedBytes: number;
  keyCheckMs: number;
}

const eventStreamResponse = {
  description: 'The stream (text/event-stream), until the client leaves or an `end` event.',
  headers: RATE_LIMIT_HEADERS,
  content: { 'text/event-stream': { schema: Type.String({ description: 'Events: scan, resync, end (see the operation).' }) } },
};

const LastEventIdHeader = Type.Object({
  'last-event-id': Type.Optional(Type.String({ maxLength: 1024, description: 'The `id` of the last event received: the stream resumes after it.' })),
}, { additionalProperties: true });

export async function liveRoutes(app: App, deps: LiveRoutesDeps): Promise<void> {
  const tags = ['analytics'];
  const slots = new StreamSlots(deps.redis, deps.log);
  const keys = new KeyWatch(deps.pg, deps.log, deps.keyCheckMs);
  app.addHook('onClose', async () => {
    slots.close();
    keys.close();
  });

  const serve = async (request: FastifyRequest, reply: FastifyReply, filter: ScanFilter): Promise<FastifyReply> => {
    const auth = request.linksAuth;
    // HEAD (Fastify answers it with the GET route): the headers a stream would have, and no stream.
    if (request.method === 'HEAD') return reply.type('text/event-stream; charset=utf-8').header('cache-control', 'no-cache, no-transform').send();
    const header = request.headers['last-event-id'];
    const resumeFrom = typeof header === 'string' && header !== '' ? parseCursor(header) : undefined;
    if (typeof header === 'string' && header !== '' && !resumeFrom) throw invalidLastEventId();
    // Watched from here: a client gone while its slot is taken or the hub starts gives both back.
    const gone = clientGone(reply);
    const slot = await slots.acquire(auth.workspaceId, liveStreamLimit(auth.plan));
    if (!slot) {
      throw new ApiError(429, 'stream_limit_reached', `This workspace has ${liveStreamLimit(auth.plan)} live streams open, its plan's limit; close one first.`, undefined, { 'retry-after': '15' });
    }
    let opened;
    try {
      opened = await streamScans(reply, deps.hub, { workspaceId: auth.workspaceId, filter, resumeFrom, gone, heartbeatMs: deps.heartbeatMs, maxBufferedBytes: deps.maxBufferedBytes });
    } catch (err) {
      slot.release();
      if (err instanceof InvalidResume) throw invalidLastEventId();
      if (err instanceof LiveScansUnavailable) throw liveScansUnavailable();
      throw err;
    }
    if (!opened) {
      slot.release();
      return reply;
    }
    const { stream } = opened;
    const unwatch = keys.watch(auth.keyId, () => stream.end('revoked'));
    stream.onEnd(() => {
      unwatch();
      slot.release();
    });
    return reply;
  };

  app.get('/analytics/stream', {
    schema: {
      tags, operationId: 'streamWorkspaceScans', summary: 'Live scans of the workspace (Server-Sent Events)',
      description: `${STREAM_DESCRIPTION} Filters: linkId, country, device, trigger; a linkId the workspace does not have is 404 not_found.`,
      querystring: WorkspaceStreamQuery,
      headers: LastEventIdHeader,
      response: { 200: eventStreamResponse as never, ...errorResponses(...API_ERRORS, 404, 503) },
    },
  }, async (request, reply) => {
    const q = request.query;
    if (q.linkId && !(await deps.links.get(request.linksAuth.workspaceId, q.linkId))) throw notFound('link');
    return serve(request, reply, filterOf({ ...q, linkId: q.linkId?.toLowerCase() }));
  });

  app.get('/links/:id/analytics/stream', {
    schema: {
      tags, operationId: 'streamLinkScans', summary: 'Live scans of one link (Server-Sent Events)',
      description: `${STREAM_DESCRIPTION} Filters: country, device, trigger.`,
      params: Type.Object({ id: Type.String({ description: 'Link UUID, in any case.' }) }),
      querystring: LinkStreamQuery,
      headers: LastEventIdHeader,
      response: { 200: eventStreamResponse as never, ...errorResponses(...API_ERRORS, 404, 503) },
    },
  }, async (request, reply) => {
    const link = await deps.links.get(request.linksAuth.workspaceId, request.params.id);
    if (!link) throw notFound('link');
    return serve(request, reply, filterOf({ ...request.query, linkId: link.id }));
  });
}

function filterOf(q: { linkId?: string; country?: string; device?: string; trigger?: 'link' | 'qr' }): ScanFilter {
  const filter: ScanFilter = {};
  if (q.linkId) filter.linkId = q.linkId;
  if (q.country) filter.country = q.country.toUpperCase();
  if (q.device) filter.device = q.device;
  if (q.trigger) filter.trigger = q.trigger;
  return filter;
}

const invalidLastEventId = () =>
  new ApiError(400, 'invalid_last_event_id', 'Last-Event-ID is not an id this stream sent; reconnect without it to start from now.', [{ path: '/headers/last-event-id', message: 'not a stream position' }]);

/** The hub's consumer could not start (Kafka away): the stream cannot be served for now; the next request tries again. */
export const liveScansUnavailable = () =>
  new ApiError(503, 'live_scans_unavailable', 'Live scans cannot be followed on this server right now; retry in a moment.', undefined, { 'retry-after': '5' });
