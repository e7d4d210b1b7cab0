// Mail organizations, keys and verified domains, made through the admin and mail APIs as an operator and a customer would.
import { randomBytes } from 'node:crypto';
import { ADMIN_TOKEN, call } from '../ingress.ts';

const admin = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };

export interface KeyOptions {
  kind?: 'full' | 'send' | 'test';
  domains?: string[];
  rate_limit?: number;
}

/** Issues a mail API key of the organization through the admin API. */
export async function mailKey(baseUrl: string, organizationId: string, options: KeyOptions = {}): Promise<{ key: string; keyId: string }> {
  const res = await call(baseUrl, 'POST', `/admin/v1/organizations/${organizationId}/keys`, { ...admin, body: { name: 'test', kind: options.kind ?? 'full', ...options } });
  if (res.status !== 201) throw new Error(`mail key create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { key: res.body.key, keyId: res.body.api_key.id };
}

/** Creates an organization on the plan, with a key (full unless told otherwise). */
export async function organizationWithKey(baseUrl: string, options: KeyOptions & { plan?: 'free' | 'pro'; daily_send_cap?: number } = {}): Promise<{ organizationId: string; key: string; keyId: string }> {
  const { plan = 'pro', daily_send_cap, ...keyOptions } = options;
  const org = await call(baseUrl, 'POST', '/admin/v1/organizations', { ...admin, body: { name: `org-${randomBytes(3).toString('hex')}`, plan, ...(daily_send_cap === undefined ? {} : { daily_send_cap }) } });
  if (org.status !== 201) throw new Error(`organization create failed: ${org.status} ${JSON.stringify(org.body)}`);
  return { organizationId: org.body.id, ...(await mailKey(baseUrl, org.body.id, keyOptions)) };
}

/** A fresh domain name under example.com's documentation space. */
export const freshDomain = (): string => `m${randomBytes(4).toString('hex')}.example.com`;

/** Adds a domain with a full key and marks it verified through the admin API. */
export async function verifiedDomain(baseUrl: string, fullKey: string, name = freshDomain(), trackingHost?: string): Promise<{ id: string; name: string }> {
  const created = await call(baseUrl, 'POST', '/api/v1/domains', { key: fullKey, body: { name, ...(trackingHost ? { tracking_host: trackingHost } : {}) } });
  if (created.status !== 201) throw new Error(`domain create failed: ${created.status} ${JSON.stringify(created.body)}`);
  const verified = await call(baseUrl, 'POST', `/admin/v1/domains/${created.body.id}/verify`, admin);
  if (verified.status !== 200) throw new Error(`domain verify failed: ${verified.status} ${JSON.stringify(verified.body)}`);
  return { id: created.body.id, name };
}

/** Admin request options, for tests that call /admin/v1 themselves. */
export const adminOptions = admin;

/** Waits for the next second (Redis runs on this machine's clock): a key may send one batch per second. */
export const nextSecond = (): Promise<void> => new Promise((r) => setTimeout(r, 1005 - (Date.now() % 1000)));
