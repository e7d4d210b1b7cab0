// Checking a tool's arguments with the validator of REST bodies (the same Ajv
// configuration, formats and NUL rule, so the same codes and details), then
// decoding TypeBox transforms (e.g. ids lower-cased). Ajv fills in `default`s.
import type { TObject } from '@sinclair/typebox';
import { HasTransform, TransformDecode } from '@sinclair/typebox/value';
import type { ErrorObject } from 'ajv';
import { compileBodyCheck, describeValidation, type ValidationFailure } from '../http/validation.ts';

export type ArgumentCheck = (args: unknown) => { ok: true; args: unknown } | { ok: false; failure: ValidationFailure };

/** Worded for a tool call: a missing argument is named by its own pointer, an unknown one as no argument of the tool. */
function asArgumentError(e: ErrorObject): ErrorObject {
  if (e.keyword === 'required') return { ...e, instancePath: `${e.instancePath}/${String((e.params as { missingProperty: string }).missingProperty)}` };
  if (e.keyword === 'additionalProperties') return { ...e, message: 'is not an argument of this tool' };
  return e;
}

export function compileArgumentCheck(schema: TObject): ArgumentCheck {
  const check = compileBodyCheck(schema);
  const decodes = HasTransform(schema, []);
  return (args) => {
    // A copy, as Ajv writes the defaults into the value it checks.
    const value = structuredClone(args ?? {});
    const errors = check(value);
    if (errors) return { ok: false, failure: describeValidation(errors.map(asArgumentError)) };
    return { ok: true, args: decodes ? TransformDecode(schema, [], value) : value };
  };
}
