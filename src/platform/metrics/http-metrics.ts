// Counts every HTTP request of a server by its route pattern (not its URL: a
// short ID or a resource id would make a series per value) and status.
import type { FastifyInstance } from 'fastify';
import { httpRequestDuration, httpRequests } from './series.ts';

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
