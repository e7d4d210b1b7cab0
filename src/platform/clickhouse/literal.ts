// The only way values enter ClickHouse SQL. ClickHouse 18.16 has no server-side
// query parameters, so values are rendered as typed literals here: strings are
// escaped, numbers and dates validated, identifiers checked against a strict
// pattern. Anything else is refused rather than stringified.
//
//   sql`SELECT count() FROM ${ident('scans')} WHERE workspace_id = ${ws} AND ts >= ${from}`

export class SqlFragment {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

export type SqlValue = string | number | bigint | boolean | Date | null | SqlFragment | readonly SqlValue[];

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NEEDS_ESCAPE = /[\\'\x00-\x1f\x7f]/;

/** Escapes a string as a ClickHouse single-quoted literal (backslash escapes, as ClickHouse parses them). */
export function stringLiteral(value: string): string {
  // Most values (ids, names) have nothing to escape: no walk over their characters.
  if (!NEEDS_ESCAPE.test(value)) return `'${value}'`;
  let out = "'";
  for (const ch of value) {
    switch (ch) {
      case '\\': out += '\\\\'; break;
      case "'": out += "\\'"; break;
      case '\n': out += '\\n'; break;
      case '\r': out += '\\r'; break;
      case '\t': out += '\\t'; break;
      case '\0': out += '\\0'; break;
      case '\b': out += '\\b'; break;
      case '\f': out += '\\f'; break;
      default: {
        const code = ch.codePointAt(0)!;
        // Other control characters as \xHH so the literal stays on one line and printable.
        out += code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, '0')}` : ch;
      }
    }
  }
  return out + "'";
}

function numberLiteral(value: number): string {
  if (!Number.isFinite(value)) throw new TypeError(`ClickHouse literal: ${value} is not a finite number`);
  // Exponent notation is valid ClickHouse syntax, but keep integers plain. Negative numbers are
  // parenthesised so that `x -${n}` can never become `x --5`, a comment.
  const text = Number.isInteger(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER ? value.toFixed(0) : String(value);
  return value < 0 ? `(${text})` : text;
}

function dateLiteral(value: Date): string {
  const ms = value.getTime();
  if (!Number.isFinite(ms)) throw new TypeError('ClickHouse literal: invalid Date');
  // DateTime is second-precision UTC epoch; a number avoids any server time-zone parsing.
  if (ms < 0 || ms / 1000 > 0xffffffff) throw new RangeError('ClickHouse literal: Date outside the DateTime range');
  return `toDateTime(${Math.floor(ms / 1000)})`;
}

/** Renders one value as a ClickHouse literal. */
export function literal(value: SqlValue): string {
  if (value === null) return 'NULL';
  if (value instanceof SqlFragment) return value.text;
  if (value instanceof Date) return dateLiteral(value);
  if (Array.isArray(value)) return `[${value.map((v) => literal(v)).join(', ')}]`;
  switch (typeof value) {
    case 'string': return stringLiteral(value);
    case 'number': return numberLiteral(value);
    case 'bigint': return value < 0n ? `(${value.toString()})` : value.toString();
    case 'boolean': return value ? '1' : '0';
    default: throw new TypeError(`ClickHouse literal: unsupported value of type ${typeof value}`);
  }
}

/** Tagged template: interpolated values become literals; nested sql`` fragments are spliced as they are. */
export function sql(strings: TemplateStringsArray, ...values: SqlValue[]): SqlFragment {
  let text = strings[0] ?? '';
  values.forEach((value, i) => {
    text += literal(value) + (strings[i + 1] ?? '');
  });
  return new SqlFragment(text);
}

/** A table, column or database name: checked, then back-quoted. */
export function ident(name: string): SqlFragment {
  if (!IDENTIFIER.test(name)) throw new TypeError(`ClickHouse identifier refused: ${JSON.stringify(name)}`);
  return new SqlFragment(`\`${name}\``);
}

/** A calendar day (YYYY-MM-DD, UTC) as a Date literal. */
export function day(value: Date): SqlFragment {
  const ms = value.getTime();
  if (!Number.isFinite(ms)) throw new TypeError('ClickHouse literal: invalid Date');
  return new SqlFragment(`toDate(${stringLiteral(value.toISOString().slice(0, 10))})`);
}

/** A parenthesised list for `IN`, which ClickHouse can match against the primary key. */
export function inList(values: readonly SqlValue[]): SqlFragment {
  if (values.length === 0) throw new RangeError('ClickHouse literal: an IN list needs at least one value');
  return new SqlFragment(`(${values.map((v) => literal(v)).join(', ')})`);
}

// From this many values on, inStrings sends one literal instead of a list.
const SPLIT_FROM = 100;

/**
 * A set of strings for `IN`. ClickHouse 18.16 spends about 4 µs parsing each literal of a list, so a
 * large set goes as one comma-separated literal that the server splits; if any value holds a comma,
 * as a list. Tens of thousands (a sink's ids) are cheaper still sent beside the query as a table of
 * their own (ClickHouse.rowsWith, external-values.ts).
 */
export function inStrings(values: readonly string[]): SqlFragment {
  if (values.length < SPLIT_FROM || values.some((v) => v.includes(','))) return inList(values);
  return new SqlFragment(`(SELECT arrayJoin(splitByChar(',', ${stringLiteral(values.join(','))})))`);
}

/** Joins fragments with a separator (e.g. AND-ed conditions, or the SELECTs of a union). */
export function join(parts: readonly SqlFragment[], separator: ' AND ' | ' OR ' | ', ' | ' UNION ALL '): SqlFragment {
  return new SqlFragment(parts.map((p) => p.text).join(separator));
}
