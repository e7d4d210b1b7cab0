// Schema pieces the mail API's routes share.
import { Type, type SchemaOptions } from '@sinclair/typebox';

/** A DNS host name of two or more labels (compared and stored lower-case). */
export const Hostname = (options: SchemaOptions = {}) =>
  Type.String({ maxLength: 253, pattern: '^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}$', ...options });

/** Path parameter `id`. */
export const IdParams = Type.Object({ id: Type.String() });

/** ISO 8601 UTC timestamp of a mail object. */
export const Timestamp = (options: SchemaOptions = {}) => Type.String({ format: 'date-time', ...options });
export const NullableTimestamp = (options: SchemaOptions = {}) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], options);
