// Response serializers compiled on a route's first answer, not when the route is registered.
// fast-json-stringify builds code for every response schema of every route (each status of each
// route, ~1 s of CPU for this API): an ingress that compiled them all at start was listening only
// after that second, and a process that starts many (the test suite) paid it for routes it never
// calls. A route answers its first response a few milliseconds later instead; the code is the same.
// A schema it cannot build would now fail that route's first answer rather than the start, so the
// suite compiles them all once (compileAllSerializers, test/integration/platform/openapi.test.ts).
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type Serialize = (data: unknown) => string;
type BuildSerializer = (externalSchemas: unknown, options?: unknown) => (route: { schema: unknown; method: string; url: string; httpStatus: string }) => Serialize;

const eager = SerializerSelector() as unknown as BuildSerializer;

/** The compilations not run yet, of every app this process built. */
const pending = new Set<() => Serialize>();

export const buildLazySerializer: BuildSerializer = (externalSchemas, options) => (route) => {
  let serialize: Serialize | undefined;
  let failed: unknown;
  const compile = (): Serialize => {
    if (failed !== undefined) throw failed;
    pending.delete(compile);
    try {
      // Options of its own for each route: the stock compiler edits them (it drops the route's own
      // $id from the shared schemas), which would depend on the order routes are first called in.
      return (serialize = eager(externalSchemas, options)(route));
    } catch (err) {
      // Remembered: a schema that cannot be built is not built again on every answer.
      failed = err;
      throw err;
    }
  };
  pending.add(compile);
  return (data) => (serialize ?? compile())(data);
};

/** Compiles every serializer not compiled yet, as Fastify would at start; throws on the first schema it cannot build. */
export function compileAllSerializers(): number {
  const all = [...pending];
  for (const compile of all) compile();
  return all.length;
}
