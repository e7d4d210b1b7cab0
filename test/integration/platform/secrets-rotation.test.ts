// Stored secrets over time (src/platform/secrets/sealed-columns.ts, src/reseal-secrets.ts): rows
// written in clear by an earlier release are sealed by the start-up step, once; a key rotation
// (a new key first, reseal, the old key removed) moves every value to the new key while an
// ingress serves, and a start without a key that values are still sealed under stops, naming it.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newDkimKeys } from '../../../src/mail/domains/dkim-keys.ts';
import { createLogger } from '../../../src/platform/logger.ts';
import { migrateAll } from '../../../src/platform/migrations.ts';
import { sealedAt } from '../../../src/platform/secrets/sealed-columns.ts';
import { SealedSecrets } from '../../../src/platform/secrets/sealed-secrets.ts';
import { secretsKeysOf } from '../../../src/platform/secrets/secrets-keys.ts';
import { serviceSealedColumns } from '../../../src/service.ts';
import { testConfig, testEnv } from '../../support/env.ts';
import { call, client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';

// Databases of this file's own: its reseal and its keys touch every row there.
useOwnDatabases();

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const log = createLogger({ LOG_LEVEL: 'silent' });
let ingress: TestIngress;

beforeAll(async () => {
  ingress = await startIngress();
}, 120_000);

afterAll(async () => {
  await ingress?.close();
});

/** Every sealed column's values of every row, as stored, with their rows' ids. */
async function stored(): Promise<Record<string, { id: string; v: string | null }[]>> {
  const all: Record<string, { id: string; v: string | null }[]> = {};
  for (const { table, column } of serviceSealedColumns) {
    all[`${table}.${column}`] = (await ingress.platform.pg.query(`SELECT id, ${column} AS v FROM ${table} ORDER BY id`)).rows;
  }
  return all;
}

const storedValues = async () => Object.values(await stored()).flat().map((r) => r.v).filter((v): v is string => v !== null);

/** The values of one column (`table.column`) opened, each at its row. */
function opened(secrets: SealedSecrets, values: Awaited<ReturnType<typeof stored>>, name: string): string[] {
  const column = serviceSealedColumns.find((c) => `${c.table}.${c.column}` === name)!;
  return values[name]!.map((r) => secrets.open(r.v!, sealedAt(column, r.id)));
}
const migrate = (keys: string) => migrateAll(testConfig({ SECRETS_KEYS: keys }), log, serviceSealedColumns);

/** Runs `node src/reseal-secrets.ts` as an operator would, with these keys. */
function reseal(keys: string): Promise<{ status: number | null; out: string }> {
  const child = spawn(process.execPath, ['src/reseal-secrets.ts'], { cwd: ROOT, env: { ...testEnv(), SECRETS_KEYS: keys } });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return new Promise((resolve) => child.once('exit', (status) => resolve({ status, out })));
}

// What the first test stores, in clear as an earlier release did; the second rotates the key under them.
const clear = { linkSecret: `whsec_${randomBytes(24).toString('base64url')}`, linkPrevious: `whsec_${randomBytes(24).toString('base64url')}`, mailSecret: `whsec_${randomBytes(24).toString('base64')}` };
let pem = '';
let mailKey = '';
let mailHookId = '';

it('the start-up step seals secrets an earlier release stored in clear, which read the same before and after; a second start changes nothing', async () => {
  const { pg, secrets } = ingress.platform;
  const ws = await workspaceWithKey(ingress.url);
  const links = client(ingress.url, ws.key);
  const linkHook = (await links.post('/api/v1/webhooks', { url: 'https://hooks.example.com/old' })).body;
  const org = await organizationWithKey(ingress.url, { rate_limit: 1000 });
  mailKey = org.key;
  const domain = await verifiedDomain(ingress.url, org.key);
  mailHookId = (await call(ingress.url, 'POST', '/webhooks', { key: org.key, body: { endpoint: 'https://hooks.example.com/mail', events: ['email.sent'] } })).body.id;

  // As rows of a release before sealing: the secrets and the DKIM key in clear.
  const keys = await newDkimKeys();
  pem = keys.privateKeyPem;
  await pg.query('UPDATE webhook_endpoints SET secret = $2, previous_secret = $3, previous_secret_expires_at = now() + interval \'1 hour\' WHERE id = $1', [linkHook.id, clear.linkSecret, clear.linkPrevious]);
  await pg.query('UPDATE mail_webhook_endpoints SET secret = $2 WHERE id = $1', [mailHookId, clear.mailSecret]);
  await pg.query('UPDATE mail_domains SET dkim_private_key = $2, dkim_public_key = $3 WHERE id = $1', [domain.id, pem, keys.publicKeyBase64]);
  expect((await storedValues()).filter((v) => v.startsWith('sealed:'))).toEqual([]);

  // Read while still in clear (a process of the new release beside old ones): the API answers as before.
  expect((await call(ingress.url, 'GET', `/webhooks/${mailHookId}`, { key: org.key })).body.signing_secret).toBe(clear.mailSecret);
  expect((await links.get(`/api/v1/webhooks/${linkHook.id}`)).body.secretHint).toBe(`${clear.linkSecret.slice(0, 10)}…`);

  await migrate(ingress.platform.config.SECRETS_KEYS);
  const sealed = await stored();
  expect(sealed['mail_webhook_endpoints.previous_secret']!.map((r) => r.v)).toEqual([null]);
  // The same form as values written by this release: under the first key.
  for (const value of await storedValues()) expect(value.startsWith(`sealed:v2:${secrets.currentKeyId}:`)).toBe(true);
  expect(opened(secrets, sealed, 'webhook_endpoints.secret')).toEqual([clear.linkSecret]);
  expect(opened(secrets, sealed, 'webhook_endpoints.previous_secret')).toEqual([clear.linkPrevious]);
  expect(opened(secrets, sealed, 'mail_webhook_endpoints.secret')).toEqual([clear.mailSecret]);
  expect(opened(secrets, sealed, 'mail_domains.dkim_private_key')).toEqual([pem]);
  expect((await call(ingress.url, 'GET', `/webhooks/${mailHookId}`, { key: org.key })).body.signing_secret).toBe(clear.mailSecret);
  expect((await links.get(`/api/v1/webhooks/${linkHook.id}`)).body.secretHint).toBe(`${clear.linkSecret.slice(0, 10)}…`);

  await migrate(ingress.platform.config.SECRETS_KEYS);
  expect(await stored()).toEqual(sealed);
});

it('rotation: a new key first, reseal while the service runs, then the old key removed; a start missing a key still in use stops, naming it', async () => {
  const old = ingress.platform.config.SECRETS_KEYS;
  const oldId = ingress.platform.secrets.currentKeyId;
  const fresh = `rotated:${randomBytes(32).toString('base64')}`;

  // Removed before resealing: nothing could open the values, so the start stops and says which key they need.
  await expect(migrate(fresh)).rejects.toThrow(new RegExp(`value\\(s\\) of mail_domains\\.dkim_private_key under key id "${oldId}"`));

  // 1. Every process gets the new key first, the old one after it: new values are sealed under the new key, old ones still open.
  await ingress.close();
  ingress = await startIngress({ SECRETS_KEYS: `${fresh},${old}` });
  expect(ingress.platform.secrets.currentKeyId).toBe('rotated');

  // 2. Reseal while the ingress serves and rotates a secret: the rotated value is kept, every value ends under the new key.
  const rotations = (async () => {
    let last = '';
    for (let i = 0; i < 5; i++) last = (await call(ingress.url, 'POST', `/webhooks/${mailHookId}/signing-secret/rotate`, { key: mailKey })).body.signing_secret;
    return last;
  })();
  const [run, lastSecret] = await Promise.all([reseal(`${fresh},${old}`), rotations]);
  expect(run.status, run.out).toBe(0);
  expect(run.out).toMatch(/mail_domains\.dkim_private_key: 1 resealed under key "rotated"/);
  expect(run.out).toContain('every stored secret is sealed under key "rotated"');
  for (const value of await storedValues()) expect(value.startsWith('sealed:v2:rotated:')).toBe(true);
  const again = await reseal(`${fresh},${old}`);
  expect(again.out).toMatch(/webhook_endpoints\.secret: 0 resealed/);

  // 3. The old key removed: the start passes, and an ingress with the new key alone reads every secret.
  await migrate(fresh);
  await ingress.close();
  ingress = await startIngress({ SECRETS_KEYS: fresh });
  expect((await call(ingress.url, 'GET', `/webhooks/${mailHookId}`, { key: mailKey })).body.signing_secret).toBe(lastSecret);
  const onlyFresh = new SealedSecrets(secretsKeysOf({ NODE_ENV: 'test', SECRETS_KEYS: fresh }));
  const values = await stored();
  expect(opened(onlyFresh, values, 'mail_domains.dkim_private_key')).toEqual([pem]);
  expect(opened(onlyFresh, values, 'webhook_endpoints.secret')).toEqual([clear.linkSecret]);
  // And a process given only the old key stops at start, naming the key the values need now.
  await expect(migrate(old)).rejects.toThrow(/under key id "rotated"/);
});
