// How the API answers a refused webhook endpoint registration: the status, code and message.
import { ApiError } from '../../platform/http/errors.ts';
import { endpointUrlError } from '../../platform/webhooks/endpoint-url.ts';
import type { WebhookRefusal } from './webhook-store.ts';

export function webhookRefusalError(r: WebhookRefusal): ApiError {
  if (r.reason === 'webhook_limit_reached') return new ApiError(409, r.reason, `A workspace can have at most ${r.max} webhook endpoints; delete one first.`);
  return endpointUrlError(r);
}
