// Named schemas, the `components.schemas` of the OpenAPI document. A schema
// with an `$id` is registered once per server with app.addSchema: Fastify hands
// it to the response serializers, to the request validators (validation.ts
// buildValidator) and to @fastify/swagger, which keeps the $id as its name.
// Routes and other schemas point at it with ref(), so generated clients get one
// named type instead of copies.
//
// A named schema must never be copied (spread, or nested by value in another
// schema): two schemas with one $id are refused by the validator. Request bodies
// that are also validated on their own (bulk items, MCP tools) hold no refs.
import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';
import type { App } from './server.ts';

function idOf(schema: TSchema): string {
  if (typeof schema.$id !== 'string' || schema.$id === '') throw new Error(`Not a named schema (no $id): ${JSON.stringify(schema).slice(0, 80)}`);
  return schema.$id;
}

/** Every named schema a ref() pointed at, so that inlineRefs can resolve what ref() made. */
const referenced = new Map<string, TSchema>();

/** A reference to a named schema, typed as the schema itself. */
export const ref = <T extends TSchema>(schema: T): TUnsafe<Static<T>> => {
  referenced.set(idOf(schema), schema);
  return Type.Unsafe<Static<T>>(Type.Ref(idOf(schema)));
};

/**
 * The schema as plain JSON with every ref() replaced by the named schema it
 * points at (without its $id), for readers that have no components to look
 * refs up in: MCP clients checking tool arguments and results.
 */
export function inlineRefs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(inlineRefs);
  if (schema === null || typeof schema !== 'object') return schema;
  const { $ref, ...rest } = schema as Record<string, unknown>;
  if (typeof $ref === 'string') {
    const named = referenced.get($ref);
    if (!named) throw new Error(`inlineRefs: no named schema ${$ref}`);
    const { $id: _id, ...body } = JSON.parse(JSON.stringify(named)) as Record<string, unknown>;
    return inlineRefs({ ...body, ...rest });
  }
  const { $id: _id, ...withoutId } = rest;
  return Object.fromEntries(Object.entries(withoutId).map(([key, value]) => [key, inlineRefs(value)]));
}

/** Registers named schemas with the server (its plugin context and those below), before the routes that use them. */
export function addComponents(app: App, schemas: readonly TSchema[]): void {
  for (const schema of schemas) {
    idOf(schema);
    app.addSchema(schema);
  }
}
