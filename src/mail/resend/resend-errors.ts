// Errors at Resend's root paths: Resend's body ({statusCode, name, message}) with
// `name` one of Resend's names, so code written for Resend branches as it did, and
// our stable code beside it in `error.code` (the same object as every mail error).
// Where Resend answers another status, so do these routes: a request that lacks a
// required field is 422 missing_required_field, a wrong or revoked key 403
// invalid_api_key, a key of too little permission 401 restricted_api_key; every
// other status is ours (docs/mail-api.md, "Resend's API at the root").
import { Type } from '@sinclair/typebox';
import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasBearerKey } from '../../platform/http/attempt-guard.ts';
import { ApiError, ErrorBody, type ErrorBodyType, type ErrorDetailType } from '../../platform/http/errors.ts';
import { errorResponsesOf } from '../../platform/http/openapi.ts';
import { errorBody, errorHandler } from '../../platform/http/server.ts';
import { describeValidation, summarize } from '../../platform/http/validation.ts';

/** The names Resend's API answers with (the SDK's RESEND_ERROR_CODE_KEY) that this service uses. */
export const RESEND_ERROR_NAMES = [
  'validation_error', 'missing_required_field', 'missing_api_key', 'invalid_api_key', 'restricted_api_key', 'invalid_access',
  'not_found', 'rate_limit_exceeded', 'daily_quota_exceeded', 'internal_server_error',
  'invalid_idempotency_key', 'invalid_idempotent_request',
] as const;
export type ResendErrorName = (typeof RESEND_ERROR_NAMES)[number];

const QUOTAS = new Set(['contact_quota_exceeded', 'run_quota_exceeded']);

/** Our codes that are Resend's names too: the same refusal, named as Resend names it (the idempotency key's, at /emails). */
const NAMED_AS_RESEND = new Set<string>(['invalid_idempotency_key', 'invalid_idempotent_request']);

/** Resend's name for one of our refusals. */
export function resendErrorName(code: string, status: number): ResendErrorName {
  if (NAMED_AS_RESEND.has(code)) return code as ResendErrorName;
  if (code === 'missing_api_key') return 'missing_api_key';
  if (code === 'invalid_api_key') return 'invalid_api_key';
  // A sending key at a resource it may not manage: Resend's word for a key of too little permission.
  if (code === 'insufficient_permissions') return 'restricted_api_key';
  // A domain-restricted key at a resource of every domain (/webhooks): restricted too, though 403.
  if (code === 'domain_restricted_key') return 'restricted_api_key';
  if (status === 401) return 'invalid_api_key';
  if (status === 403) return 'invalid_access';
  if (status === 404) return 'not_found';
  if (status === 429) return QUOTAS.has(code) ? 'daily_quota_exceeded' : 'rate_limit_exceeded';
  if (status >= 500) return 'internal_server_error';
  if (code === 'missing_required_field') return 'missing_required_field';
  return 'validation_error';
}

export const ResendError = Type.Object(
  {
    statusCode: Type.Integer({ description: 'The HTTP status.' }),
    name: Type.String({ enum: [...RESEND_ERROR_NAMES], description: 'Resend\'s name of the error; error.code holds this service\'s stable code.' }),
    message: Type.String(),
    error: ErrorBody.properties.error,
  },
  { $id: 'ResendError', title: 'ResendError', description: 'The body of every error at Resend\'s root paths: Resend\'s shape, with the platform\'s error object.' },
);

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request (validation_error; error.code: validation_failed, unknown_field, invalid_json, or a field-specific code).',
  401: 'No mail API key (missing_api_key), or a send or test key at a resource it may not manage (restricted_api_key; error.code insufficient_permissions).',
  403: 'A wrong or revoked key (invalid_api_key), or a domain the key may not use (invalid_access).',
  404: 'Not found among the resources this key can see (not_found).',
  409: 'Conflict with existing data (validation_error; error.code names it), or an idempotency key used with another request (invalid_idempotent_request).',
  422: 'A required field is missing (missing_required_field), or a value is not acceptable (validation_error).',
  429: 'Rate limited (rate_limit_exceeded; see Retry-After).',
};

/** Response schemas for the error statuses of a root route. */
export const resendErrorResponses = errorResponsesOf(ResendError, STATUS_TEXT);
export const RESEND_ERRORS = [401, 403, 429] as const;
export const RESEND_BODY_ERRORS = [...RESEND_ERRORS, 400, 413, 415, 422] as const;

const render = (requestId: string, code: string, message: string, details: ErrorDetailType[] | undefined, status: number) => ({
  statusCode: status,
  name: resendErrorName(code, status),
  message,
  ...errorBody(requestId, code, message, details),
});

const handle = errorHandler(render);

/** Our refusals that Resend answers with another status: code → Resend's status. */
const RESEND_STATUS: Record<string, number> = { invalid_api_key: 403, insufficient_permissions: 401 };

/** The error handler of the root resources' context. */
export function resendErrorHandler(error: FastifyError | ApiError | Error, request: FastifyRequest, reply: FastifyReply) {
  const restatus = error instanceof ApiError ? RESEND_STATUS[error.code] : undefined;
  if (error instanceof ApiError && restatus !== undefined) return handle(new ApiError(restatus, error.code, error.message, error.details, error.headers), request, reply);
  const validation = (error as FastifyError).validation as ErrorObject[] | undefined;
  // A body that lacks a required field (not an absent body: that stays invalid_json).
  if (validation && request.body !== undefined && validation.some((e) => e.keyword === 'required')) {
    const { details } = describeValidation(validation);
    return handle(new ApiError(422, 'missing_required_field', `Missing required field: ${summarize(details)}`, details), request, reply);
  }
  return handle(error, request, reply);
}

/**
 * A 404 no route took, for an API client at the root (a key, outside /api/ and /admin/): with
 * Resend's statusCode and name, so Resend's SDK reports not_found for a path of any depth, as the
 * redirect route does for one segment. Anything else keeps the platform's body.
 */
export function resendNotFoundAtRoot(request: FastifyRequest, body: ErrorBodyType): object {
  const path = request.url.split('?')[0]!;
  if (!hasBearerKey(request) || /^\/(api|admin)(\/|$)/.test(path)) return body;
  return { statusCode: 404, name: resendErrorName(body.error.code, 404), message: body.error.message, ...body };
}
