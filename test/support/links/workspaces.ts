// Workspaces and API keys of the link product, made through its admin API (/admin/v1) as an operator would.
import { randomBytes } from 'node:crypto';
import { ADMIN_TOKEN, call } from '../ingress.ts';

/** Creates a workspace with the plan and an API key for it, through the admin API. */
export async function workspaceWithKey(baseUrl: string, plan: 'free' | 'pro' | 'enterprise' = 'enterprise'): Promise<{ workspaceId: string; key: string; keyId: string }> {
  const admin = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };
  const ws = await call(baseUrl, 'POST', '/admin/v1/workspaces', { ...admin, body: { name: `ws-${randomBytes(3).toString('hex')}`, plan } });
  if (ws.status !== 201) throw new Error(`workspace create failed: ${ws.status} ${JSON.stringify(ws.body)}`);
  const key = await call(baseUrl, 'POST', `/admin/v1/workspaces/${ws.body.id}/keys`, { ...admin, body: { name: 'test' } });
  if (key.status !== 201) throw new Error(`key create failed: ${key.status} ${JSON.stringify(key.body)}`);
  return { workspaceId: ws.body.id, key: key.body.key, keyId: key.body.apiKey.id };
}
