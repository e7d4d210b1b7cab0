// The outbound rules a webhook URL must meet at registration: an absolute
// HTTPS URL without credentials, not a private or loopback address (unless the
// host is on the allow-list). Names are checked again at every attempt
// (webhook-sender.ts), since they may resolve differently later.
import { isIP } from 'node:net';
import { ApiError } from '../http/errors.ts';
import { isPrivateAddress } from '../http/outbound.ts';

/** Why a webhook URL was refused; `field` names the body field that held it. */
export type EndpointUrlRefusal =
  | { reason: 'invalid_url'; field: string; problem: 'not a URL' | 'has credentials' }
  | { reason: 'webhook_url_not_https'; field: string }
  | { reason: 'webhook_url_private'; field: string; host: string };

/** The URL as stored, or why it was refused. */
export function endpointUrlResult(raw: string, allowHosts: readonly string[], field = 'url'): { ok: true; url: string } | { ok: false; refusal: EndpointUrlRefusal } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, refusal: { reason: 'invalid_url', field, problem: 'not a URL' } };
  }
  if (url.protocol !== 'https:') return { ok: false, refusal: { reason: 'webhook_url_not_https', field } };
  if (url.username || url.password) return { ok: false, refusal: { reason: 'invalid_url', field, problem: 'has credentials' } };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // What is certain now is refused now.
  const local = host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && isPrivateAddress(host));
  if (local && !allowHosts.includes(host)) return { ok: false, refusal: { reason: 'webhook_url_private', field, host } };
  url.hash = '';
  return { ok: true, url: url.toString() };
}

/** The API's answer to a refused webhook URL: a 400 naming the field and what is wrong with it. */
export function endpointUrlError(r: EndpointUrlRefusal): ApiError {
  const path = `/${r.field}`;
  switch (r.reason) {
    case 'invalid_url':
      return r.problem === 'not a URL'
        ? new ApiError(400, r.reason, `${r.field} is not an absolute URL.`, [{ path, message: r.problem }])
        : new ApiError(400, r.reason, 'Put credentials in your receiver, not in the URL.', [{ path, message: r.problem }]);
    case 'webhook_url_not_https': return new ApiError(400, r.reason, 'Webhook endpoints must use HTTPS.', [{ path, message: 'must be https' }]);
    case 'webhook_url_private': return new ApiError(400, r.reason, `${r.host} is not a public address.`, [{ path, message: 'private address' }]);
  }
}
