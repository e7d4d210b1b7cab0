import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import addFormatsImport from 'ajv-formats';
import { singleTypeSchema } from '../../../src/platform/mcp/single-type-schema.ts';

const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ strict: false }));

/** Every value is accepted by the rewritten schema exactly when by the original. */
function expectSameVerdicts(schema: object, values: unknown[]) {
  const before = ajv.compile(schema);
  const after = ajv.compile(singleTypeSchema(schema) as object);
  for (const v of values) expect(after(v), JSON.stringify(v)).toBe(before(v));
}

describe('singleTypeSchema', () => {
  it('writes a nullable type list as anyOf, keeping each keyword with its type', () => {
    expect(singleTypeSchema({ type: ['string', 'null'], format: 'date-time', maxLength: 30, description: 'When.' })).toEqual({
      description: 'When.',
      anyOf: [{ type: 'string', format: 'date-time', maxLength: 30 }, { type: 'null' }],
    });
    expect(singleTypeSchema({ type: ['integer'], minimum: 1 })).toEqual({ type: 'integer', minimum: 1 });
  });

  it('rewrites at every depth and leaves single types and anyOf alone', () => {
    const schema = {
      type: 'object',
      required: ['a'],
      properties: {
        a: { type: 'array', items: { type: ['number', 'null'], minimum: 0 } },
        b: { anyOf: [{ type: 'string' }, { type: 'null' }] },
        c: { type: ['object', 'null'], properties: { d: { type: ['boolean', 'null'] } }, required: ['d'], additionalProperties: false },
      },
    };
    const out = singleTypeSchema(schema);
    expect(JSON.stringify(out)).not.toMatch(/"type":\[/);
    expect((out as any).properties.b).toEqual(schema.properties.b);
    expect((out as any).properties.c).toEqual({
      anyOf: [{ type: 'object', properties: { d: { anyOf: [{ type: 'boolean' }, { type: 'null' }] } }, required: ['d'], additionalProperties: false }, { type: 'null' }],
    });
    expect(schema.properties.a.items.type).toEqual(['number', 'null']); // the input is not changed
    expectSameVerdicts(schema, [
      { a: [] }, { a: [1, null, 2.5] }, { a: [-1] }, { a: ['x'] }, {}, { a: [], b: null }, { a: [], b: 3 },
      { a: [], c: null }, { a: [], c: { d: null } }, { a: [], c: { d: true } }, { a: [], c: {} }, { a: [], c: { d: true, e: 1 } }, { a: [], c: 'x' },
    ]);
  });

  it('keeps enum, const and an existing anyOf as constraints of the whole', () => {
    const withEnum = { type: ['string', 'null'], enum: ['a', null], minLength: 1 };
    expectSameVerdicts(withEnum, ['a', null, 'b', '', 1]);
    const withAnyOf = { type: ['string', 'integer'], anyOf: [{ minLength: 2 }, { minimum: 5 }] };
    expect(JSON.stringify(singleTypeSchema(withAnyOf))).not.toMatch(/"type":\[/);
    expectSameVerdicts(withAnyOf, ['ab', 'a', 7, 3, null, 'abc', 1.5]);
  });
});
