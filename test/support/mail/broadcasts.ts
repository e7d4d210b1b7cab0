// Broadcast helpers over real HTTP, as a customer drives them: an organization with a verified
// domain and a `news` topic, imported contacts, broadcasts created and watched until a status.
// `baseUrl` is read at each call, so a test file can make these before its ingress starts.
import { expect } from 'vitest';
import { call } from '../ingress.ts';
import { eventually } from '../env.ts';
import { organizationWithKey, verifiedDomain } from './organizations.ts';

export interface Org {
  organizationId: string;
  key: string;
  domain: string;
  from: string;
}

export function broadcastHelpers(baseUrl: () => string) {
  const api = (org: Pick<Org, 'key'>, method: string, path: string, body?: unknown) =>
    call(baseUrl(), method, path, { key: org.key, ...(body === undefined ? {} : { body }) });

  /** An organization (rate limit 1000) with a verified domain and an opt-in topic `news`. */
  async function organization(options: { daily_send_cap?: number } = {}): Promise<Org> {
    const org = await organizationWithKey(baseUrl(), { rate_limit: 1000, ...options });
    const domain = await verifiedDomain(baseUrl(), org.key, undefined, 'links.example.com');
    await api(org, 'POST', '/api/v1/topics', { slug: 'news', name: 'News', default_subscription: 'opt_in' });
    return { ...org, domain: domain.name, from: `News <news@${domain.name}>` };
  }

  /** Imports `count` subscribed contacts (NDJSON) named by `prefix`, with their properties. */
  async function contacts(org: Org, count: number, prefix: string, properties: (i: number) => Record<string, unknown> = () => ({})): Promise<void> {
    const raw = Array.from({ length: count }, (_, i) => JSON.stringify({ email: `${prefix}-${i}@example.net`, first_name: `P${i}`, properties: properties(i) })).join('\n');
    const res = await call(baseUrl(), 'POST', '/api/v1/contacts/import', { key: org.key, raw, headers: { 'content-type': 'application/x-ndjson' } });
    expect(res.status).toBe(200);
  }

  const broadcastBody = (org: Org, extra: Record<string, unknown> = {}) => ({ name: 'Spring', from: org.from, topic: 'news', subject: 'Hello {{contact.first_name}}', html: '<html><body><p>Hi {{contact.first_name}}</p></body></html>', text: 'Hi', ...extra });

  async function create(org: Org, extra: Record<string, unknown> = {}) {
    const res = await api(org, 'POST', '/api/v1/broadcasts', broadcastBody(org, extra));
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(201);
    return res.body;
  }

  const get = async (org: Org, id: string) => (await api(org, 'GET', `/api/v1/broadcasts/${id}`)).body;

  /** The broadcast once it has `status`. */
  async function until(org: Org, id: string, status: string, timeoutMs = 60_000) {
    return eventually(async () => {
      const b = await get(org, id);
      return b.status === status ? b : undefined;
    }, timeoutMs);
  }

  return { api, organization, contacts, broadcastBody, create, get, until };
}
