// The segment filter language: a small JSON language over contact fields and
// properties, checked with precise errors and compiled to a parameterised SQL
// expression over `mail_contacts c` (no value or property name is ever put into
// the SQL text). The README's "Segment filters" documents it:
//   condition  { "field": F, "op": OP, "value": V }
//   groups     { "all": [ … ] }, { "any": [ … ] }, { "not": filter }
//   fields     email, first_name, last_name, status, created_at, properties.<name>
//   ops        eq, neq, contains, exists, gt, gte, lt, lte, in
export type SegmentFilter =
  | { all: SegmentFilter[] }
  | { any: SegmentFilter[] }
  | { not: SegmentFilter }
  | Condition;

export interface Condition {
  field: string;
  op: Op;
  value?: unknown;
}

type Scalar = string | number | boolean;
const OPS = ['eq', 'neq', 'contains', 'exists', 'gt', 'gte', 'lt', 'lte', 'in'] as const;
type Op = (typeof OPS)[number];
const TEXT_FIELDS = ['email', 'first_name', 'last_name', 'status'];
const PROPERTY = /^properties\.([A-Za-z0-9_-]{1,64})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/;
export const MAX_DEPTH = 5;
export const MAX_CONDITIONS = 100;
export const MAX_IN = 1000;

export interface FilterError {
  path: string;
  message: string;
}

/** Checks a filter sent by a client; every problem with its JSON pointer inside the filter. */
export function parseSegmentFilter(input: unknown): { ok: true; filter: SegmentFilter } | { ok: false; errors: FilterError[] } {
  const errors: FilterError[] = [];
  let conditions = 0;

  const check = (node: unknown, path: string, depth: number): void => {
    if (!node || typeof node !== 'object' || Array.isArray(node)) return void errors.push({ path, message: 'must be an object: a condition or a group (all, any, not)' });
    const keys = Object.keys(node);
    const group = keys.find((k) => k === 'all' || k === 'any' || k === 'not');
    if (group) {
      if (keys.length !== 1) return void errors.push({ path, message: `a group has only its "${group}" key` });
      if (depth >= MAX_DEPTH) return void errors.push({ path, message: `groups nest at most ${MAX_DEPTH} deep` });
      const members = (node as Record<string, unknown>)[group];
      if (group === 'not') return check(members, `${path}/not`, depth + 1);
      if (!Array.isArray(members) || members.length < 1 || members.length > MAX_CONDITIONS) return void errors.push({ path: `${path}/${group}`, message: `must be an array of 1 to ${MAX_CONDITIONS} filters` });
      members.forEach((m, i) => check(m, `${path}/${group}/${i}`, depth + 1));
      return;
    }
    conditions++;
    const c = node as Record<string, unknown>;
    for (const k of keys) if (k !== 'field' && k !== 'op' && k !== 'value') errors.push({ path: `${path}/${k}`, message: 'unknown key (a condition has field, op and value)' });
    const field = c.field;
    const isProperty = typeof field === 'string' && PROPERTY.test(field);
    if (typeof field !== 'string' || (!TEXT_FIELDS.includes(field) && field !== 'created_at' && !isProperty)) {
      errors.push({ path: `${path}/field`, message: 'must be email, first_name, last_name, status, created_at or properties.<name> (name: 1 to 64 of A-Z a-z 0-9 _ -)' });
      return;
    }
    if (typeof c.op !== 'string' || !(OPS as readonly string[]).includes(c.op)) return void errors.push({ path: `${path}/op`, message: `must be one of ${OPS.join(', ')}` });
    const op = c.op as Op;
    const value = c.value;
    const at = `${path}/value`;
    const scalar = (v: unknown) => typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
    if (op === 'exists') {
      if (typeof value !== 'boolean') errors.push({ path: at, message: 'exists takes true or false' });
    } else if (op === 'contains') {
      if (typeof value !== 'string' || value.length < 1 || value.length > 1000) errors.push({ path: at, message: 'contains takes a string of 1 to 1000 characters' });
      else if (field === 'created_at') errors.push({ path: `${path}/op`, message: 'contains does not apply to created_at' });
    } else if (op === 'in') {
      if (!Array.isArray(value) || value.length < 1 || value.length > MAX_IN || !value.every(scalar)) errors.push({ path: at, message: `in takes an array of 1 to ${MAX_IN} strings, numbers or booleans` });
      else if (new Set(value.map((v) => typeof v)).size > 1) errors.push({ path: at, message: 'the values of in are all of one type' });
      else if (!isProperty && typeof value[0] !== 'string') errors.push({ path: at, message: `${field} is compared with strings` });
    } else if (op === 'gt' || op === 'gte' || op === 'lt' || op === 'lte') {
      if (field === 'created_at') {
        if (typeof value !== 'string' || !DATE_TIME.test(value) || Number.isNaN(Date.parse(value))) errors.push({ path: at, message: 'created_at is compared with an ISO 8601 date-time with an offset' });
      } else if (isProperty) {
        if (typeof value !== 'number' || !Number.isFinite(value)) errors.push({ path: at, message: 'properties are compared with numbers' });
      } else errors.push({ path: `${path}/op`, message: `${op} applies to created_at and number properties` });
    } else {
      // eq, neq
      if (!scalar(value)) errors.push({ path: at, message: `${op} takes a string, a number or a boolean` });
      else if (field === 'created_at') {
        if (typeof value !== 'string' || !DATE_TIME.test(value)) errors.push({ path: at, message: 'created_at is compared with an ISO 8601 date-time with an offset' });
      } else if (!isProperty && typeof value !== 'string') errors.push({ path: at, message: `${field} is compared with strings` });
    }
  };

  check(input, '', 0);
  if (conditions > MAX_CONDITIONS) errors.push({ path: '', message: `at most ${MAX_CONDITIONS} conditions in all` });
  return errors.length ? { ok: false, errors } : { ok: true, filter: input as SegmentFilter };
}

/** A parenthesised boolean SQL expression over `c` (mail_contacts), with $n placeholders from `firstParamIndex`. */
export function compileSegmentFilter(filter: SegmentFilter, firstParamIndex: number): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const p = (value: unknown) => {
    params.push(value);
    return `$${firstParamIndex + params.length - 1}`;
  };
  const like = (s: string) => `%${s.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;

  const compile = (node: SegmentFilter): string => {
    if ('all' in node) return `(${node.all.map(compile).join(' AND ')})`;
    if ('any' in node) return `(${node.any.map(compile).join(' OR ')})`;
    if ('not' in node) return `(NOT ${compile(node.not)})`;
    // A condition is true or false, never NULL (a missing name is simply not "in" a list), so NOT inverts it.
    return `coalesce(${condition(node)}, false)`;
  };

  const condition = (node: Condition): string => {
    const { field, op, value } = node;
    const property = PROPERTY.exec(field)?.[1];
    if (property !== undefined) {
      const name = p(property);
      const json = `(c.properties -> ${name}::text)`;
      const type = `jsonb_typeof(${json})`;
      switch (op) {
        case 'exists': return value ? `(${type} IS NOT NULL AND ${type} <> 'null')` : `(${type} IS NULL OR ${type} = 'null')`;
        // Same JSON type and value; a missing property is "not equal".
        case 'eq': return `(${json} IS NOT NULL AND ${json} = ${p(JSON.stringify(value))}::jsonb)`;
        case 'neq': return `(${json} IS NULL OR ${json} <> ${p(JSON.stringify(value))}::jsonb)`;
        case 'in': return `(${json} IS NOT NULL AND ${json} = ANY(${p((value as Scalar[]).map((v) => JSON.stringify(v)))}::jsonb[]))`;
        case 'contains': return `(${type} = 'string' AND (c.properties ->> ${name}::text) ILIKE ${p(like(value as string))})`;
        default: {
          // Only a JSON number compares numerically; anything else never matches (and never raises).
          const cmp = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[op];
          return `(CASE WHEN ${type} = 'number' THEN (c.properties ->> ${name}::text)::numeric ${cmp} ${p(value)}::numeric ELSE false END)`;
        }
      }
    }
    const column = `c.${field}`;
    if (field === 'created_at') {
      const cmp = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' }[op as 'eq'];
      if (op === 'exists') return value ? 'true' : 'false';
      if (op === 'in') return `(${column} = ANY(${p(value)}::timestamptz[]))`;
      return `(${column} ${cmp} ${p(value)}::timestamptz)`;
    }
    // Emails are stored lower-case: compare lower-cased values.
    const norm = (v: string) => (field === 'email' ? v.toLowerCase() : v);
    switch (op) {
      case 'exists': return value ? `(${column} IS NOT NULL AND ${column} <> '')` : `(${column} IS NULL OR ${column} = '')`;
      case 'eq': return `(${column} = ${p(norm(value as string))})`;
      // A missing (null) name is "not equal" to any value.
      case 'neq': return `(${column} IS DISTINCT FROM ${p(norm(value as string))})`;
      case 'in': return `(${column} = ANY(${p((value as string[]).map(norm))}::text[]))`;
      case 'contains': return `(${column} ILIKE ${p(like(value as string))})`;
      default: throw new Error(`unreachable: ${op} on ${field}`);
    }
  };

  return { sql: compile(filter), params };
}
