// GET /:shortId/qr?size=&format=png|svg — the QR code of a link at a public URL
// on the link's host (the base domain or its branded domain; no key), for pages and print tools that embed it by
// URL. The link is found as a redirect finds it (the in-memory link cache,
// Postgres only for a short ID it does not have); the image is rendered in the
// pool and kept in a small in-process cache, and answered with caching headers
// and an ETag. Limited per client IP (Redis), so it cannot be used to keep the
// render threads busy. Unknown and deactivated links answer 404.
import { createHash } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { ref } from '../../platform/http/components.ts';
import { ApiError, ErrorBody, notFound } from '../../platform/http/errors.ts';
import { RATE_LIMIT_HEADERS } from '../../platform/http/openapi.ts';
import { StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import { clientLimitKey } from '../../platform/http/client-ip.ts';
import { failOpen } from '../../platform/limits/fail-open.ts';
import { rateLimitHeaders, SlidingWindowLimiter, type LimitDecision } from '../../platform/limits/sliding-window.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Redis } from '../../platform/redis.ts';
import type { LinkState } from '../changelog/link-state.ts';
import { withQrMarker } from '../redirect/qr-marker.ts';
import type { RenderPool } from './render-pool.ts';
import type { QrTask } from './render-task.ts';

/** Public QR images per minute per client IP. */
export const PUBLIC_QR_PER_MINUTE_PER_IP = 60;
/** Images kept rendered in memory (a 1024 px PNG is a few kilobytes). */
const CACHED_IMAGES = 1000;
/** How long browsers and shared caches may keep an image: a deactivated link's image may be served that long. */
const MAX_AGE_SECONDS = 300;

export const PublicQrQuery = Type.Object({
  size: Type.Optional(Type.Integer({ minimum: 100, maximum: 1024, default: 512, description: 'Width and height in pixels (SVG: its viewport), 100 to 1024.' })),
  format: Type.Optional(StringEnum(['png', 'svg'] as const, { default: 'png' })),
});

interface CachedImage {
  contentType: string;
  body: Buffer;
  etag: string;
}

export interface PublicQrDeps {
  pool: RenderPool;
  redis: Redis;
  log: Logger;
  shortLinkBase: string;
  /** The link of a short ID on the request's host, as a redirect would find it (undefined also for a host that serves no links). */
  findLink: (host: string, shortId: string) => LinkState | undefined | Promise<LinkState | undefined>;
}

const IMAGE_HEADERS = {
  ...RATE_LIMIT_HEADERS,
  'cache-control': Type.String({ description: `public, max-age=${MAX_AGE_SECONDS}` }),
  etag: Type.String({ description: 'Send it back as If-None-Match: 304 while the image is the same.' }),
};

export async function publicQrRoute(app: App, deps: PublicQrDeps): Promise<void> {
  const limiter = new SlidingWindowLimiter(deps.redis, 'public-qr-ip', PUBLIC_QR_PER_MINUTE_PER_IP, 60_000);
  // Insertion order is the age: a hit moves an image to the end, the oldest is dropped first.
  const images = new Map<string, CachedImage>();

  async function image(task: QrTask): Promise<CachedImage> {
    const key = `${task.format}|${task.size}|${task.text}`;
    const cached = images.get(key);
    if (cached) {
      images.delete(key);
      images.set(key, cached);
      return cached;
    }
    const rendered = await deps.pool.render(task);
    if ('refused' in rendered) throw new Error(`the renderer refused a QR code: ${rendered.refused}`);
    const made = { contentType: rendered.contentType, body: Buffer.from(rendered.body), etag: `"${createHash('sha256').update(key).digest('base64url').slice(0, 27)}"` };
    images.set(key, made);
    if (images.size > CACHED_IMAGES) images.delete(images.keys().next().value!);
    return made;
  }

  app.get<{ Params: { shortId: string }; Querystring: Static<typeof PublicQrQuery> }>('/:shortId/qr', {
    schema: {
      tags: ['qr'],
      security: [],
      operationId: 'publicQrCode',
      summary: 'The QR code of a link, at a public URL',
      description: `The link's short URL as a QR code (with the \`?qr\` marker: a scan of it is recorded with trigger qr; the redirect strips it), without a key, for embedding by URL (\`<img src="https://go.example.com/spring-menu/qr?size=300">\`). Not a scan. Cached: \`Cache-Control: public, max-age=${MAX_AGE_SECONDS}\` and an ETag (304 on If-None-Match). At most ${PUBLIC_QR_PER_MINUTE_PER_IP} per minute per client IP (429 qr_rate_limited). 404 not_found for an unknown or deactivated link; 400 validation_failed for a size outside 100–1024 or a format other than png or svg.`,
      params: Type.Object({ shortId: Type.String({ maxLength: 200 }) }),
      querystring: PublicQrQuery,
      response: {
        200: {
          description: 'The image.',
          headers: IMAGE_HEADERS,
          content: { 'image/png': { schema: Type.String({ format: 'binary' }) }, 'image/svg+xml': { schema: Type.String() } },
        } as never,
        304: Type.Null({ description: 'Not modified.', headers: IMAGE_HEADERS }),
        400: { ...ref(ErrorBody), description: 'A size outside 100–1024 or a format other than png or svg (validation_failed).' },
        404: { ...ref(ErrorBody), description: 'No active link has this short ID (not_found).' },
        429: { ...ref(ErrorBody), description: `More than ${PUBLIC_QR_PER_MINUTE_PER_IP} QR images per minute from this IP (qr_rate_limited).`, headers: { ...RATE_LIMIT_HEADERS, 'retry-after': Type.Integer() } },
        503: { ...ref(ErrorBody), description: 'The renderer is saturated (render_busy); Retry-After says when to try again.' },
      } as never,
    },
  }, async (request, reply) => {
    // Redis away: let it through (the render queue is still bounded).
    const decision = await failOpen<LimitDecision | undefined>(deps.log, 'public-qr-ip', () => limiter.hit(clientLimitKey(request)), undefined);
    if (decision && !decision.allowed) throw new ApiError(429, 'qr_rate_limited', `More than ${PUBLIC_QR_PER_MINUTE_PER_IP} QR images per minute from your network; wait a moment.`, undefined, rateLimitHeaders(decision));
    if (decision) reply.headers(rateLimitHeaders(decision));
    const { shortId } = request.params;
    const link = await deps.findLink(request.host, shortId);
    if (!link || !link.isActive) throw notFound('link');
    const made = await image({
      kind: 'qr',
      // The link's short URL: on its branded domain, or the base one.
      // With the marker that tells the redirect this visitor scanned the code (qr-marker.ts).
      text: withQrMarker(link.domain ? `https://${link.domain}/${shortId}` : `${deps.shortLinkBase}/${shortId}`),
      format: request.query.format ?? 'png',
      size: request.query.size ?? 512,
      margin: 4,
      errorCorrection: 'M',
      fgColor: '#000000',
      bgColor: '#ffffff',
    });
    reply.header('cache-control', `public, max-age=${MAX_AGE_SECONDS}`).header('etag', made.etag);
    if (request.headers['if-none-match'] === made.etag) return reply.status(304).send();
    return reply.type(made.contentType).send(made.body);
  });
}
