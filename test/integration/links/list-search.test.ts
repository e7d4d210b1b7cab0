// GET /api/v1/links?q=: what it matches, and that the OpenAPI document says the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';

let ingress: TestIngress;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  ingress = await startIngress();
  api = client(ingress.url, (await workspaceWithKey(ingress.url)).key);
});
afterAll(async () => {
  await ingress?.close();
});

describe('q on the link list', () => {
  it('matches a substring of the short ID or destination, and a whole tag only', async () => {
    const link = await api.post('/api/v1/links', { destination: 'https://Example.com/Spring-Menu', shortId: 'qsearch-abc', tags: ['Summer'] });
    expect(link.status).toBe(201);
    const ids = async (q: string) => (await api.get(`/api/v1/links?q=${encodeURIComponent(q)}`)).body.data.map((l: any) => l.id);
    expect(await ids('SEARCH-A')).toEqual([link.body.id]);
    expect(await ids('spring-menu')).toEqual([link.body.id]);
    expect(await ids('summer')).toEqual([link.body.id]);
    expect(await ids('SUMMER')).toEqual([link.body.id]);
    expect(await ids('summ')).toEqual([]);

    const doc = await call(ingress.url, 'GET', '/api/v1/openapi');
    const q = doc.body.paths['/api/v1/links'].get.parameters.find((p: any) => p.name === 'q');
    expect(q.description).toMatch(/short ID or destination contains it/);
    expect(q.description).toMatch(/the whole tag/);
  });
});
