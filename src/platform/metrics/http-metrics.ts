// Counts every HTTP request of a server by its route pattern (not its URL: a
// short ID or a resource id would make a series per value) and status.
import type { FastifyInstance } from 'fastify';
import { beforeHttpSeriesRead, httpRequestDuration, httpRequests } from './series.ts';
import { AnswerTally } from './answer-tally.ts';

export function countHttpRequests(app: FastifyInstance<any, any, any, any, any>): void {
  // A callback hook: it runs after every response, redirects included.
  app.addHook('onResponse', (request, reply, done) => {
    countAnswered(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

/** Counts one answered request (also one answered before Fastify: front-door.ts). */
export function countAnswered(method: string, route: string, status: number, seconds: number): void {
  httpRequests.inc({ method, route, status });
  httpRequestDuration.observe({ method, route, status_class: `${Math.floor(status / 100)}xx` }, seconds);
}

/**
 * A counter for one route's answers of one status, for a route too hot to count each answer with
 * prom-client (the redirect answered before Fastify): the same series, added to them when read.
 */
export function answerCounter(method: string, route: string, status: number): (seconds: number) => void {
  const tally = new AnswerTally(httpRequests, httpRequestDuration, method, route, status);
  beforeHttpSeriesRead.add(() => tally.flush());
  return (seconds) => tally.count(seconds);
}
