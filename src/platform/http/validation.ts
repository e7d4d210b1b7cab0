// Request validation: bodies are validated strictly (no type coercion, unknown
// fields rejected, nothing removed), while querystring, params and headers are
// coerced from their string form, as HTTP requires.
import { Ajv, type Options } from 'ajv';
import addFormatsImport from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, removeAdditional: false, useDefaults: true, strict: false, ...options });
  addFormats(ajv);
  return ajv;
}

const bodyAjv = makeAjv({ coerceTypes: false });
const stringPartsAjv = makeAjv({ coerceTypes: 'array' });

export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : stringPartsAjv;
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<any>>;
};

/** A validator for a JSON value with the strict body rules, for values validated outside a route (bulk items). */
export function compileBodyValidator(schema: object): (value: unknown) => { path: string; message: string }[] | undefined {
  const validate = bodyAjv.compile(schema);
  return (value) => {
    if (validate(value)) return undefined;
    return (validate.errors ?? []).map((e) => ({
      path: e.instancePath + (e.keyword === 'additionalProperties' ? `/${String((e.params as { additionalProperty: string }).additionalProperty)}` : ''),
      message: e.message ?? 'invalid',
    }));
  };
}
