// One error body for every endpoint:
//   { "error": { "code": "validation_failed", "message": "…", "requestId": "…", "details": [{ "path": "/x", "message": "…" }] } }
// `code` is stable and machine-readable; `message` is for people and may change.
import { Type, type Static } from '@sinclair/typebox';

export const ErrorDetail = Type.Object({
  path: Type.String({ description: 'JSON pointer to the offending field, or "" for the whole request.' }),
  message: Type.String(),
});

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'Stable error code, e.g. validation_failed, not_found, rate_limited.' }),
      message: Type.String(),
      requestId: Type.String(),
      details: Type.Optional(Type.Array(ErrorDetail)),
    }),
  },
  { title: 'Error', description: 'The body of every error response.' },
);

export type ErrorBodyType = Static<typeof ErrorBody>;
export type ErrorDetailType = Static<typeof ErrorDetail>;

/** An error with an HTTP status and a stable code; thrown by handlers, rendered by the error handler. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly details?: ErrorDetailType[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const notFound = (what = 'resource') => new ApiError(404, 'not_found', `${what} not found`);
