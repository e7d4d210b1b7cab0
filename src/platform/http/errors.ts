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
  { $id: 'Error', title: 'Error', description: 'The body of every error response.' },
);

/** Fastify's own body for a request the HTTP server refuses before any route runs (not the Error body). */
export const HttpRefusal = Type.Object(
  {
    error: Type.String({ description: 'The HTTP status text.', examples: ['Bad Request'] }),
    message: Type.String({ examples: ['Client Error'] }),
    statusCode: Type.Integer({ examples: [400] }),
  },
  { $id: 'HttpRefusal', title: 'HttpRefusal', description: 'A malformed request (400), one too slow to arrive (408), headers too large (431), or any request while the server shuts down (503).' },
);

export type ErrorBodyType = Static<typeof ErrorBody>;
export type ErrorDetailType = Static<typeof ErrorDetail>;

/** An error with an HTTP status and a stable code; thrown by handlers, rendered by the error handler. */
export class ApiError extends Error {
  readonly statusCode: number;
  readonly code: string;
  readonly details?: ErrorDetailType[];
  readonly headers?: Record<string, string>;

  constructor(
    statusCode: number,
    code: string,
    message: string,
    details?: ErrorDetailType[],
    headers?: Record<string, string>,
  ) {
    super(message);
    this.statusCode = statusCode;
    this.code = code;
    this.details = details;
    this.headers = headers;
    this.name = 'ApiError';
  }
}

export const notFound = (what = 'resource') => new ApiError(404, 'not_found', `${what} not found`);
