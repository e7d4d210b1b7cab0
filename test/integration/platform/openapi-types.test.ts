// The OpenAPI document as a typed client sees it: openapi-typescript generates
// types from the document a real ingress serves, and a small client written
// against the named schemas and an operation compiles with the repo's tsc.
// A schema that is missing, or that came out as `unknown`, fails the compile.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIngress, type TestIngress } from '../../support/ingress.ts';

const run = promisify(execFile);
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

// Compiles only when every type it names exists and is not `unknown`.
const CLIENT = `
import type { components, paths } from './api';

type Schemas = components['schemas'];
/** Accepts \`true\` only for a type that is known (not never, unknown or any). */
type Known<T> = [T] extends [never] ? 'is never' : unknown extends T ? 'is unknown' : true;
const known = <T>(_check: Known<T>): void => {};

known<Schemas['Link']>(true);
known<Schemas['Campaign']>(true);
known<Schemas['Error']>(true);
known<Schemas['BulkOperation']>(true);
known<Schemas['BulkResult']>(true);

type CreateLinkRequest = paths['/api/v1/links']['post']['requestBody']['content']['application/json'];
type CreateLinkResponse = paths['/api/v1/links']['post']['responses'][201]['content']['application/json'];
type CreateLinkError = paths['/api/v1/links']['post']['responses'][400]['content']['application/json'];
known<CreateLinkRequest>(true);
known<CreateLinkResponse>(true);

async function createLink(baseUrl: string, key: string, body: CreateLinkRequest): Promise<Schemas['Link']> {
  const res = await fetch(baseUrl + '/api/v1/links', { method: 'POST', headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) {
    const problem = (await res.json()) as CreateLinkError;
    throw new Error(problem.error.code + ': ' + problem.error.message);
  }
  const link = (await res.json()) as CreateLinkResponse;
  const shortUrl: string = link.shortUrl;
  const active: boolean = link.isActive;
  void shortUrl;
  void active;
  return link;
}

const campaign = (c: Schemas['Campaign']): string => c.name + ' ' + String(c.linkCount);
const errorCode = (e: Schemas['Error']): string => e.error.code;

// A bulk operation is a union of named members, discriminated by action.
const operations: Schemas['BulkOperation'][] = [
  { action: 'create', link: { destination: 'https://example.com/a', tags: ['print'] } },
  { action: 'update', id: '00000000-0000-4000-8000-000000000000', changes: { isActive: false } },
  { action: 'delete', id: '00000000-0000-4000-8000-000000000000' },
];
// @ts-expect-error an unknown action is not a bulk operation
const wrongAction: Schemas['BulkOperation'] = { action: 'explode', id: 'x' };
// @ts-expect-error a create operation carries a link
const missingLink: Schemas['BulkOperation'] = { action: 'create' };
const bulkBody: paths['/api/v1/links/bulk']['post']['requestBody']['content']['application/json'] = { operations };
const firstStatus = (r: paths['/api/v1/links/bulk']['post']['responses'][200]['content']['application/json']): number => r.results[0]!.status;

export { createLink, campaign, errorCode, wrongAction, missingLink, bulkBody, firstStatus };
`;

let ingress: TestIngress;
let dir: string;

beforeAll(async () => {
  ingress = await startIngress();
  dir = await mkdtemp(join(tmpdir(), 'openapi-types-'));
});
afterAll(async () => {
  await ingress?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('types generated from the OpenAPI document', () => {
  it('name Link, Campaign, Error and the bulk operations, and type the create-link operation', async () => {
    const doc = (await (await fetch(`${ingress.url}/api/v1/openapi`)).json()) as OpenAPI3;
    const types = astToString(await openapiTS(doc, { silent: true }));
    await writeFile(join(dir, 'api.d.ts'), types);
    await writeFile(join(dir, 'client.ts'), CLIENT);
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', lib: ['ES2022', 'DOM'], strict: true, noEmit: true, noUncheckedIndexedAccess: true, types: [] },
      files: ['client.ts'],
    }));
    const result = await run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { cwd: dir, maxBuffer: 16 * 1024 * 1024, timeout: 120_000 })
      .then(() => ({ ok: true, output: '' }))
      .catch((err: { stdout?: string; stderr?: string }) => ({ ok: false, output: `${err.stdout ?? ''}${err.stderr ?? ''}` }));
    expect(result.ok, `the typed client does not compile against the generated types:\n${result.output}`).toBe(true);
  }, 150_000); // longer than the child process's own 120 s timeout, so that one reports
});
