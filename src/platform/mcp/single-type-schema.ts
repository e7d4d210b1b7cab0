// Tool schemas as MCP clients read them most widely: every `type` a single
// name. A type list (`{"type": ["string", "null"]}`, legal JSON Schema) becomes
// `anyOf` branches of one type each, as some clients (those that map tool
// schemas onto OpenAPI-style dialects) accept nothing else; the MCP Inspector
// reports type lists as portability warnings. The schema accepts exactly what
// it accepted: keywords that constrain one type move into that type's branch,
// the others (enum, const, combinators, annotations) stay beside `anyOf`.

/** Keywords that constrain only instances of one type, by that type. */
const ONLY_FOR: Record<string, readonly string[]> = {
  string: ['minLength', 'maxLength', 'pattern', 'format', 'contentEncoding', 'contentMediaType'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  array: ['items', 'prefixItems', 'additionalItems', 'minItems', 'maxItems', 'uniqueItems', 'contains', 'minContains', 'maxContains', 'unevaluatedItems'],
  object: ['properties', 'required', 'additionalProperties', 'patternProperties', 'propertyNames', 'minProperties', 'maxProperties', 'dependentRequired', 'dependentSchemas', 'unevaluatedProperties'],
};
const TYPED = new Set(Object.values(ONLY_FOR).flat());

/** The schema with every type list written as anyOf branches (a new object; the input is not changed). */
export function singleTypeSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(singleTypeSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const node = Object.fromEntries(Object.entries(schema as Record<string, unknown>).map(([k, v]) => [k, singleTypeSchema(v)]));
  const { type } = node;
  if (!Array.isArray(type)) return node;
  if (type.length === 1) return { ...node, type: type[0] };

  const shared: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) if (key !== 'type' && !TYPED.has(key)) shared[key] = value;
  const branches = (type as string[]).map((t) => {
    const branch: Record<string, unknown> = { type: t };
    for (const key of ONLY_FOR[t] ?? []) if (key in node) branch[key] = node[key];
    return branch;
  });
  // An anyOf already there must hold too: both go under allOf.
  if ('anyOf' in shared) {
    const { anyOf, ...rest } = shared;
    return { ...rest, allOf: [...((rest.allOf as unknown[]) ?? []), { anyOf }, { anyOf: branches }] };
  }
  return { ...shared, anyOf: branches };
}
