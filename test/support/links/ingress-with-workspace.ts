// The set-up most link test files share: an ingress of their own with one fresh workspace, its key and
// an API client, and a way to create a link and check it was created.
import { expect } from 'vitest';
import { client, startIngress, type TestIngress } from '../ingress.ts';
import { workspaceWithKey } from './workspaces.ts';

export type ApiClient = ReturnType<typeof client>;

/** Starts an ingress (a generous API rate limit unless overridden) and makes a workspace with a key on it. */
export async function ingressWithWorkspace(overrides: Record<string, string> = {}): Promise<{ ingress: TestIngress; api: ApiClient; key: string; workspaceId: string }> {
  const ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000', ...overrides });
  const { workspaceId, key } = await workspaceWithKey(ingress.url);
  return { ingress, api: client(ingress.url, key), key, workspaceId };
}

/** Creates a link through the API, failing the test with the answer unless it is 201; the link as answered. */
export async function createdLink(api: ApiClient, body: Record<string, unknown>) {
  const res = await api.post('/api/v1/links', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}
