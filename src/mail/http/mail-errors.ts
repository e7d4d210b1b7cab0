// The mail product's error body: the platform's error object, and at the top the
// three fields Resend's API answers with (`statusCode`, `name`, `message`), so a
// Resend SDK user reads our stable code as `error.name`:
//   { "statusCode": 409, "name": "not_schedulable", "message": "…",
//     "error": { "code": "not_schedulable", "message": "…", "requestId": "…", "details"?: […] } }
import { Type } from '@sinclair/typebox';
import { ErrorBody, type ErrorDetailType } from '../../platform/http/errors.ts';
import { errorResponsesOf } from '../../platform/http/openapi.ts';
import { errorBody, errorHandler } from '../../platform/http/server.ts';

export const MailError = Type.Object(
  {
    statusCode: Type.Integer({ description: 'The HTTP status, as Resend answers it.' }),
    name: Type.String({ description: 'The stable error code (the same as error.code), as Resend names it.' }),
    message: Type.String(),
    error: ErrorBody.properties.error,
  },
  { $id: 'MailError', title: 'MailError', description: 'The body of every error of the mail API: Resend\'s shape, with the platform\'s error object.' },
);

export const mailErrorBody = (requestId: string, code: string, message: string, details: ErrorDetailType[] | undefined, status: number) => ({
  statusCode: status,
  name: code,
  message,
  ...errorBody(requestId, code, message, details),
});

/** The error handler of the mail routes' contexts. */
export const mailErrorHandler = errorHandler(mailErrorBody);

const MAIL_STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request (validation_failed, unknown_field, invalid_json, or a field-specific code).',
  401: 'Missing or invalid mail API key (missing_api_key, invalid_api_key).',
  403: 'The key\'s kind or domains do not allow this (insufficient_permissions, domain_not_allowed, domain_restricted_key).',
  404: 'Not found among the resources this key can see (not_found).',
  409: 'Conflict with the resource\'s state or existing data.',
  422: 'Well-formed but not acceptable (for example from_domain_not_verified).',
  429: 'Rate limited (rate_limited: the key\'s requests per second; auth_rate_limited: failed keys per IP; see Retry-After) or a daily quota of POST /events spent (contact_quota_exceeded, run_quota_exceeded).',
};

/** Response schemas for the given error statuses of a mail route. */
export const mailErrorResponses = errorResponsesOf(MailError, MAIL_STATUS_TEXT);

/** The error statuses of an authenticated mail route, and of one that takes a JSON body. */
export const MAIL_ERRORS = [401, 403, 429] as const;
export const MAIL_BODY_ERRORS = [...MAIL_ERRORS, 400, 413, 415] as const;
