// Request validation: bodies are validated strictly (no type coercion, unknown
// fields rejected, nothing removed), while querystring, params and headers are
// coerced from their string form, as HTTP requires. On top of JSON Schema:
// - `uuid` means the plain 8-4-4-4-12 form (not `urn:uuid:…`, which Postgres refuses);
// - `date-time` means ISO 8601 with a real-world offset (±14:00) in years 1970–9999;
// - no string or key anywhere may contain NUL or a lone UTF-16 surrogate (storable-text.ts): Postgres
//   cannot hold them, and one such value in a write batched with other requests would fail them all.
import { Ajv, type ErrorObject, type Options, type SchemaObject } from 'ajv';
import addFormatsImport from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { findUnstorable } from './storable-text.ts';

const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether an id can be a UUID at all (anything else cannot exist, so it is simply not found). */
export const isUuid = (value: string): boolean => UUID_PATTERN.test(value);
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-](\d{2}):(\d{2}))$/i;

export function isDateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m) return false;
  const year = Number(m[1]);
  if (year < 1970 || year > 9999) return false;
  if (m[9] !== undefined && (Number(m[9]) > 14 || Number(m[10]) > 59)) return false;
  return !Number.isNaN(Date.parse(value));
}

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, removeAdditional: false, useDefaults: true, strict: false, ...options });
  addFormats(ajv);
  ajv.addFormat('uuid', UUID_PATTERN);
  ajv.addFormat('date-time', isDateTime);
  return ajv;
}

const bodyAjv = makeAjv({ coerceTypes: false });
const stringPartsAjv = makeAjv({ coerceTypes: 'array' });

/**
 * Lets every validator resolve `$ref: "<$id>"` to this named schema. The first
 * schema of a name stays (Fastify hands each plugin context a copy of the same
 * schemas); another schema under a taken name is a mistake and refused.
 */
// Fastify hands every plugin context the same schema objects again: each is checked once.
const sharedSeen = new WeakSet<object>();

function addSharedSchema(schema: SchemaObject): void {
  const id = schema.$id;
  if (typeof id !== 'string' || sharedSeen.has(schema)) return;
  sharedSeen.add(schema);
  for (const ajv of [bodyAjv, stringPartsAjv]) {
    const known = ajv.getSchema(id)?.schema;
    if (known === undefined) ajv.addSchema(schema);
    else if (JSON.stringify(known) !== JSON.stringify(schema)) throw new Error(`Two different schemas are named "${id}".`);
  }
}

type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** Adds the storable-text rule (no NUL, no lone surrogate: storable-text.ts) to a compiled validator. */
function withStorableTextRule(validate: Validate): Validate {
  const wrapped = ((data: unknown) => {
    const ok = validate(data);
    wrapped.errors = validate.errors ?? null;
    if (!ok) return false;
    const bad = findUnstorable(data);
    if (!bad) return true;
    wrapped.errors = [{ instancePath: bad.path, schemaPath: '#', keyword: 'storable', params: {}, message: bad.reason }];
    return false;
  }) as Validate;
  return wrapped;
}

/** The compilations not run yet, of every app this process built. */
const pendingValidators = new Set<() => Validate>();

/**
 * A route part's validator, compiled on its first request rather than at start (as the serializers
 * are, lazy-serializers.ts): Ajv's code for every part of every route was a large share of an
 * ingress's start-up CPU, paid again by each process the suite starts for routes it never calls.
 * A schema Ajv cannot compile would now fail that route's first request, so the suite compiles them
 * all once (compileAllValidators, test/integration/platform/openapi.test.ts).
 */
export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : stringPartsAjv;
  let compiled: Validate | undefined;
  const compile = (): Validate => {
    pendingValidators.delete(compile);
    return (compiled = withStorableTextRule(ajv.compile(schema as object)));
  };
  pendingValidators.add(compile);
  const validate = ((data: unknown) => {
    const run = compiled ?? compile();
    const ok = run(data);
    validate.errors = run.errors ?? null;
    return ok;
  }) as Validate;
  return validate as unknown as ReturnType<FastifySchemaCompiler<any>>;
};

/** Compiles every validator not compiled yet, as Fastify would at start; throws on the first schema Ajv refuses. */
export function compileAllValidators(): number {
  const all = [...pendingValidators];
  for (const compile of all) compile();
  return all.length;
}

/**
 * Fastify's validator builder (setSchemaController): called for each plugin
 * context with the named schemas (app.addSchema) it can see, which the
 * validators learn before compiling that context's routes. (A plain
 * setValidatorCompiler is replaced by Fastify's own Ajv in a plugin that adds schemas.)
 */
export function buildValidator(externalSchemas: Record<string, unknown>): FastifySchemaCompiler<any> {
  for (const schema of Object.values(externalSchemas)) addSharedSchema(schema as SchemaObject);
  return validatorCompiler;
}

/** Ajv's message, with the allowed values spelled out for enums. */
export function errorMessage(e: ErrorObject): string {
  if (e.keyword === 'enum') return `must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.map(String).join(', ')}`;
  return e.message ?? 'invalid';
}

export interface ValidationFailure {
  code: 'unknown_field' | 'validation_failed';
  details: { path: string; message: string }[];
}

/**
 * Whether `e` is the "must be null" of a nullable field's null branch (`Type.Union([X, Type.Null()])`,
 * an anyOf) while X's branch says what is wrong: the field is not null, so only X's error helps.
 */
function isNullBranchNoise(e: ErrorObject, errors: readonly ErrorObject[]): boolean {
  if (e.keyword !== 'type' || (e.params as { type?: unknown }).type !== 'null') return false;
  const branch = /^(.*\/anyOf)\/\d+\/type$/.exec(e.schemaPath);
  if (!branch) return false;
  const union = `${branch[1]}/`;
  return errors.some((other) => other !== e && other.schemaPath.startsWith(union) && !other.schemaPath.startsWith(e.schemaPath.slice(0, -'type'.length)));
}

/** Ajv's errors as the API reports them: one detail per field (the pointer names an unknown field itself), and the code. */
export function describeValidation(errors: readonly ErrorObject[]): ValidationFailure {
  // anyOf/const noise from unions adds nothing the other errors do not say; nor does a nullable field's "must be null".
  const useful = errors.filter((e) => (e.keyword !== 'anyOf' || errors.length === 1) && !isNullBranchNoise(e, errors));
  return {
    code: errors.some((e) => e.keyword === 'additionalProperties') ? 'unknown_field' : 'validation_failed',
    details: useful.map((e) => ({
      path: e.instancePath + (e.keyword === 'additionalProperties' ? `/${String((e.params as { additionalProperty: string }).additionalProperty)}` : ''),
      message: errorMessage(e),
    })),
  };
}

/** Details as one line: "/a must be …; /b must …". */
export const summarize = (details: readonly { path: string; message: string }[]): string => details.map((d) => `${d.path || '(root)'} ${d.message}`).join('; ');

/** Ajv's errors for a JSON value under the strict body rules (none when it is valid); `default`s are filled in. */
export function compileBodyCheck(schema: object): (value: unknown) => readonly ErrorObject[] | undefined {
  const validate = withStorableTextRule(bodyAjv.compile(schema));
  return (value) => (validate(value) ? undefined : (validate.errors ?? []));
}

/** A validator for a JSON value with the strict body rules, for values validated outside a route (bulk items). */
export function compileBodyValidator(schema: object): (value: unknown) => ValidationFailure | undefined {
  const check = compileBodyCheck(schema);
  return (value) => {
    const errors = check(value);
    return errors ? describeValidation(errors) : undefined;
  };
}
