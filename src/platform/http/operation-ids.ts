// Every documented route names its operation (schema.operationId), once: client
// generators turn it into a method name, so it must exist, be unique and stay
// stable. A route without one stops the server at start-up, not in a client.
import type { App } from './server.ts';

/** Refuses, at registration, a documented route without an operationId or with one already taken. */
export function requireOperationIds(app: App): void {
  const owners = new Map<string, string>();
  app.addHook('onRoute', (route) => {
    // Fastify adds a HEAD route for each GET; the document leaves them out.
    const methods = [route.method].flat().filter((method) => method !== 'HEAD');
    const schema = route.schema as { operationId?: unknown; hide?: boolean } | undefined;
    if (methods.length === 0 || schema?.hide) return;
    const where = `${methods.join(', ')} ${route.url}`;
    const id = schema?.operationId;
    if (typeof id !== 'string' || !/^[A-Za-z][A-Za-z0-9]*$/.test(id)) {
      throw new Error(`${where}: a documented route needs schema.operationId, a name like "createLink".`);
    }
    if (methods.length > 1) throw new Error(`${where}: one operationId cannot name ${methods.length} methods; register one route per method.`);
    const owner = owners.get(id);
    if (owner) throw new Error(`${where}: operationId "${id}" is already used by ${owner}.`);
    owners.set(id, where);
  });
}
