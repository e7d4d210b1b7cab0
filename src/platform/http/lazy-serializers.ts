// Response serializers compiled on a route's first answer, not when the route is registered.
// fast-json-stringify builds code for every response schema of every route (each status of each
// route, ~1 s of CPU for this API): an ingress that compiled them all at start was listening only
// after that second, and a process that starts many (the test suite) paid it for routes it never
// calls. A route answers its first response a few milliseconds later instead; the code is the same.
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type Serialize = (data: unknown) => string;
type BuildSerializer = (externalSchemas: unknown, options?: unknown) => (route: { schema: unknown; method: string; url: string; httpStatus: string }) => Serialize;

const eager = SerializerSelector() as unknown as BuildSerializer;

export const buildLazySerializer: BuildSerializer = (externalSchemas, options) => (route) => {
  let serialize: Serialize | undefined;
  // Options of its own for each route: the stock compiler edits them (it drops the route's own
  // $id from the shared schemas), which would depend on the order routes are first called in.
  return (data) => (serialize ??= eager(externalSchemas, options)(route))(data);
};
