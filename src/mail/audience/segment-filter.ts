// The segment filter language: a small JSON language over contact fields and
// properties, checked with precise errors and compiled to a parameterised SQL
// expression over `mail_contacts c` (no value or property name is ever put into
// the SQL text). The README's "Segment filters" documents it:
//   condition  { "field": F, "op": OP, "value": V }
//   groups     { "all": [ … ] }, { "any": [ … ] }, { "not": filter }
//   fields     email, first_name, last_name, status, created_at, properties.<name>
//   ops        eq, neq, contains, exists, gt, gte, lt, lte, in
// Every parameter of the SQL is cast to one of four types (SQL_TYPES), and a filter is
// accepted only when each of its parameters is a value Postgres takes for its type:
// the check compiles each condition and tests what it would bind, so the checks and
// the SQL cannot disagree, and a fan-out never meets a value Postgres refuses.
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
    const before = errors.length;
    checkShape(node, path, depth);
    // A well-shaped condition: are its values ones Postgres takes, as the SQL casts them?
    if (errors.length === before && isCondition(node)) errors.push(...valueProblems(node, path));
  };

  const checkShape = (node: unknown, path: string, depth: number): void => {
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
        if (typeof value !== 'string') errors.push({ path: at, message: DATE_TIME_RULE });
      } else if (isProperty) {
        if (typeof value !== 'number' || !Number.isFinite(value)) errors.push({ path: at, message: 'properties are compared with numbers' });
      } else errors.push({ path: `${path}/op`, message: `${op} applies to created_at and number properties` });
    } else {
      // eq, neq
      if (!scalar(value)) errors.push({ path: at, message: `${op} takes a string, a number or a boolean` });
      else if (field === 'created_at') {
        if (typeof value !== 'string') errors.push({ path: at, message: DATE_TIME_RULE });
      } else if (!isProperty && typeof value !== 'string') errors.push({ path: at, message: `${field} is compared with strings` });
    }
  };

  check(input, '', 0);
  if (conditions > MAX_CONDITIONS) errors.push({ path: '', message: `at most ${MAX_CONDITIONS} conditions in all` });
  return errors.length ? { ok: false, errors } : { ok: true, filter: input as SegmentFilter };
}

/** The types the compiled SQL casts its parameters to, and why Postgres would refuse a value as one (undefined: it takes it). */
const SQL_TYPES = {
  text: (v: unknown) => (typeof v === 'string' ? textProblem(v) : 'must be a string'),
  // JSON.stringify of a string, number or boolean: jsonb refuses what text refuses, in its escapes.
  jsonb: (v: unknown) => (typeof v === 'string' ? textProblem(JSON.parse(v)) : 'must be JSON'),
  numeric: (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? undefined : 'must be a finite number'),
  timestamptz: (v: unknown) => (typeof v === 'string' && isTimestamp(v) ? undefined : DATE_TIME_RULE),
} satisfies Record<string, (v: unknown) => string | undefined>;
type SqlType = keyof typeof SQL_TYPES;

const DATE_TIME_RULE = 'created_at is compared with an ISO 8601 date-time with an offset, such as 2026-01-31T09:00:00Z or 2026-01-31T10:00:00.5+01:00 (year 0001 to 9999, a day of that month, hours 00 to 23, an offset of at most 15:59)';

/** Postgres keeps neither NUL nor a lone UTF-16 surrogate in text or jsonb. */
function textProblem(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  if (v.includes('\u0000')) return 'contains a NUL character (\\u0000)';
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(v)) return 'contains a lone UTF-16 surrogate';
  return undefined;
}

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,6})?(?:Z|[+-](\d{2}):(\d{2}))$/;

/** An ISO 8601 date-time with an offset whose every field is in range (a subset of what timestamptz takes). */
function isTimestamp(v: string): boolean {
  const m = TIMESTAMP.exec(v);
  if (!m) return false;
  const [year, month, day, hour, minute, second, offsetHours = 0, offsetMinutes = 0] = m.slice(1).map((x) => (x === undefined ? undefined : Number(x))) as number[];
  const daysInMonth = new Date(Date.UTC(2000, month!, 0)).getUTCDate() - (month === 2 && !isLeap(year!) ? 1 : 0);
  return year! >= 1 && month! >= 1 && month! <= 12 && day! >= 1 && day! <= daysInMonth && hour! <= 23 && minute! <= 59 && second! <= 59 && offsetHours <= 15 && offsetMinutes <= 59;
}
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

interface Param {
  value: unknown;
  type: SqlType;
  array: boolean;
  /** Where in the condition the value comes from. */
  at: 'field' | 'value';
}

const isCondition = (node: unknown): node is Condition => typeof node === 'object' && node !== null && 'field' in node;

/** The values of a well-shaped condition that Postgres would refuse as the SQL casts them, by their path. */
function valueProblems(node: Condition, path: string): FilterError[] {
  const problems: FilterError[] = [];
  for (const param of compile(node, 1).typed) {
    const values = param.array ? (param.value as unknown[]) : [param.value];
    values.forEach((v, i) => {
      const problem = SQL_TYPES[param.type](v);
      if (problem) problems.push({ path: `${path}/${param.at}${param.array ? `/${i}` : ''}`, message: problem });
    });
  }
  return problems;
}

/** A parenthesised boolean SQL expression over `c` (mail_contacts), with $n placeholders from `firstParamIndex`. */
export function compileSegmentFilter(filter: SegmentFilter, firstParamIndex: number): { sql: string; params: unknown[] } {
  const { sql, typed } = compile(filter, firstParamIndex);
  return { sql, params: typed.map((t) => t.value) };
}

function compile(filter: SegmentFilter, firstParamIndex: number): { sql: string; typed: Param[] } {
  const typed: Param[] = [];
  /** A placeholder cast to its type: the only way a value enters the SQL. */
  const p = (value: unknown, type: SqlType, at: Param['at'] = 'value') => {
    const array = Array.isArray(value);
    typed.push({ value, type, array, at });
    return `$${firstParamIndex + typed.length - 1}::${type}${array ? '[]' : ''}`;
  };
  const like = (s: string) => `%${s.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;

  const node = (n: SegmentFilter): string => {
    if ('all' in n) return `(${n.all.map(node).join(' AND ')})`;
    if ('any' in n) return `(${n.any.map(node).join(' OR ')})`;
    if ('not' in n) return `(NOT ${node(n.not)})`;
    // A condition is true or false, never NULL (a missing name is simply not "in" a list), so NOT inverts it.
    return `coalesce(${condition(n)}, false)`;
  };

  const condition = (n: Condition): string => {
    const { field, op, value } = n;
    const property = PROPERTY.exec(field)?.[1];
    if (property !== undefined) {
      const name = p(property, 'text', 'field');
      const json = `(c.properties -> ${name})`;
      const type = `jsonb_typeof(${json})`;
      switch (op) {
        case 'exists': return value ? `(${type} IS NOT NULL AND ${type} <> 'null')` : `(${type} IS NULL OR ${type} = 'null')`;
        // Same JSON type and value; a missing property is "not equal".
        case 'eq': return `(${json} IS NOT NULL AND ${json} = ${p(JSON.stringify(value), 'jsonb')})`;
        case 'neq': return `(${json} IS NULL OR ${json} <> ${p(JSON.stringify(value), 'jsonb')})`;
        case 'in': return `(${json} IS NOT NULL AND ${json} = ANY(${p((value as Scalar[]).map((v) => JSON.stringify(v)), 'jsonb')}))`;
        case 'contains': return `(${type} = 'string' AND (c.properties ->> ${name}) ILIKE ${p(like(value as string), 'text')})`;
        default: {
          // Only a JSON number compares numerically; anything else never matches (and never raises).
          const cmp = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[op];
          return `(CASE WHEN ${type} = 'number' THEN (c.properties ->> ${name})::numeric ${cmp} ${p(value, 'numeric')} ELSE false END)`;
        }
      }
    }
    const column = `c.${field}`;
    if (field === 'created_at') {
      const cmp = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' }[op as 'eq'];
      if (op === 'exists') return value ? 'true' : 'false';
      if (op === 'in') return `(${column} = ANY(${p(value, 'timestamptz')}))`;
      return `(${column} ${cmp} ${p(value, 'timestamptz')})`;
    }
    // Emails are stored lower-case: compare lower-cased values.
    const norm = (v: string) => (field === 'email' ? v.toLowerCase() : v);
    switch (op) {
      case 'exists': return value ? `(${column} IS NOT NULL AND ${column} <> '')` : `(${column} IS NULL OR ${column} = '')`;
      case 'eq': return `(${column} = ${p(norm(value as string), 'text')})`;
      // A missing (null) name is "not equal" to any value.
      case 'neq': return `(${column} IS DISTINCT FROM ${p(norm(value as string), 'text')})`;
      case 'in': return `(${column} = ANY(${p((value as string[]).map(norm), 'text')}))`;
      case 'contains': return `(${column} ILIKE ${p(like(value as string), 'text')})`;
      default: throw new Error(`unreachable: ${op} on ${field}`);
    }
  };

  return { sql: node(filter), typed };
}
