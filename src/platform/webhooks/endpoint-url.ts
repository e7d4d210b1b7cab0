// The outbound rules a webhook URL must meet at registration: an absolute
// HTTPS URL without credentials, not a private or loopback address (unless the
// host is on the allow-list). Names are checked again at every attempt
// (webhook-sender.ts), since they may resolve differently later.
import { isIP } from 'node:net';
import { ApiError } from '../http/errors.ts';
import { isPrivateAddress } from '../http/outbound.ts';

/** The URL as stored, or a 400 naming what is wrong with it; `field` names the body field in the error. */
export function checkEndpointUrl(raw: string, allowHosts: readonly string[], field = 'url'): string {
  const path = `/${field}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ApiError(400, 'invalid_url', `${field} is not an absolute URL.`, [{ path, message: 'not a URL' }]);
  }
  if (url.protocol !== 'https:') throw new ApiError(400, 'webhook_url_not_https', 'Webhook endpoints must use HTTPS.', [{ path, message: 'must be https' }]);
  if (url.username || url.password) throw new ApiError(400, 'invalid_url', 'Put credentials in your receiver, not in the URL.', [{ path, message: 'has credentials' }]);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // What is certain now is refused now.
  const local = host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && isPrivateAddress(host));
  if (local && !allowHosts.includes(host)) throw new ApiError(400, 'webhook_url_private', `${host} is not a public address.`, [{ path, message: 'private address' }]);
  url.hash = '';
  return url.toString();
}
