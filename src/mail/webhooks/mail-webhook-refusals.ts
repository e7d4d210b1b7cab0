// How the API answers a refused webhook change: the status, code and message.
import { ApiError } from '../../platform/http/errors.ts';
import { endpointUrlError } from '../../platform/webhooks/endpoint-url.ts';
import type { MailWebhookRefusal, MailWebhookResult } from './mail-webhook-store.ts';

export function mailWebhookRefusalError(r: MailWebhookRefusal): ApiError {
  if (r.reason === 'webhook_limit_reached') return new ApiError(409, r.reason, `An organization can have at most ${r.max} webhooks; remove one first.`);
  return endpointUrlError(r);
}

/** The row, or its refusal thrown as the API's answer. */
export function webhookOrRefused<T>(result: MailWebhookResult<T>): T {
  if (!result.ok) throw mailWebhookRefusalError(result.refusal);
  return result.row;
}
