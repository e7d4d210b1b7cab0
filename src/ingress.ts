// The ingress: the HTTP process. It only does what must be answered now and
// publishes the rest to topics. Feature routes are registered here.
import type { Platform } from './platform/platform.ts';
import { buildServer, type App } from './platform/http/server.ts';

export async function buildIngress(platform: Platform): Promise<App> {
  const app = buildServer({ log: platform.log, checks: platform.checks });
  await app.ready();
  return app;
}
