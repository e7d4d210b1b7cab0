// Schema building blocks shared by the APIs, so every endpoint validates the
// same kinds of values the same way.
import { Type, type SchemaOptions } from '@sinclair/typebox';

/** A string enum as JSON Schema `enum` (clear "must be one of: …" errors, unlike a union of constants). */
export const StringEnum = <T extends string>(values: readonly T[], options: SchemaOptions = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });

/** A UUID in its plain 8-4-4-4-12 form. */
export const Uuid = (options: SchemaOptions = {}) => Type.String({ format: 'uuid', ...options });

/** A name: 1 to `max` characters with at least one that is not white space. */
export const Name = (max: number, options: SchemaOptions = {}) => Type.String({ minLength: 1, maxLength: max, pattern: '\\S', ...options });
