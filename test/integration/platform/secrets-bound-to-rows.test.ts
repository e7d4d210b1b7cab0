// Sealed secrets bound to their row (sealed:v2, src/platform/secrets/sealed-secrets.ts), two
// organizations and two workspaces side by side: a sealed value copied from one's row into the
// other's (a webhook's signing secret, a domain's DKIM key) does not open there, and the API does
// not answer the other's secret; values sealed before the binding (v1, made here with the old
// sealing) still read as before, and `node src/reseal-secrets.ts` rewrites them as v2.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LINK_WEBHOOK_SECRET } from '../../../src/links/sealed-columns.ts';
import { DKIM_PRIVATE_KEY, MAIL_WEBHOOK_SECRET } from '../../../src/mail/sealed-columns.ts';
import { sealedAt } from '../../../src/platform/secrets/sealed-columns.ts';
import { parseSecretsKeys } from '../../../src/platform/secrets/secrets-keys.ts';
import { testEnv } from '../../support/env.ts';
import { call, client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';
import { sealV1 } from '../../support/sealed-v1.ts';

// Databases of this file's own: its reseal rewrites every row there.
useOwnDatabases();

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
let ingress: TestIngress;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000' });
}, 120_000);
afterAll(async () => ingress?.close());

/** An organization with a verified domain and a webhook, and a workspace with a webhook. */
async function tenant() {
  const org = await organizationWithKey(ingress.url);
  const domain = await verifiedDomain(ingress.url, org.key);
  const mailHook = await call(ingress.url, 'POST', '/webhooks', { key: org.key, body: { endpoint: 'https://hooks.example.com/mail', events: ['email.delivered'] } });
  expect(mailHook.status).toBe(201);
  const ws = await workspaceWithKey(ingress.url);
  const linkHook = await client(ingress.url, ws.key).post('/api/v1/webhooks', { url: 'https://hooks.example.com/links' });
  expect(linkHook.status).toBe(201);
  return { org, domain, mailHook: { id: mailHook.body.id as string, secret: mailHook.body.signing_secret as string }, ws, linkHook: { id: linkHook.body.id as string, secret: linkHook.body.secret as string } };
}

const column = async (table: string, name: string, id: string): Promise<string> => (await ingress.platform.pg.query(`SELECT ${name} AS v FROM ${table} WHERE id = $1`, [id])).rows[0].v;

it('a sealed value copied into another organization\'s or workspace\'s row does not open there, and the API does not show it', async () => {
  const { pg, secrets } = ingress.platform;
  const [a, b] = await Promise.all([tenant(), tenant()]);
  const theirs = {
    mail: await column('mail_webhook_endpoints', 'secret', b.mailHook.id),
    link: await column('webhook_endpoints', 'secret', b.linkHook.id),
    dkim: await column('mail_domains', 'dkim_private_key', b.domain.id),
  };
  for (const value of Object.values(theirs)) expect(value).toMatch(new RegExp(`^sealed:v2:${secrets.currentKeyId}:`));

  // An attacker with write access to the rows (not to the key) copies b's values into a's rows.
  await pg.query('UPDATE mail_webhook_endpoints SET secret = $2 WHERE id = $1', [a.mailHook.id, theirs.mail]);
  await pg.query('UPDATE webhook_endpoints SET secret = $2 WHERE id = $1', [a.linkHook.id, theirs.link]);
  await pg.query('UPDATE mail_domains SET dkim_private_key = $2 WHERE id = $1', [a.domain.id, theirs.dkim]);

  for (const [value, at] of [[theirs.mail, sealedAt(MAIL_WEBHOOK_SECRET, a.mailHook.id)], [theirs.link, sealedAt(LINK_WEBHOOK_SECRET, a.linkHook.id)], [theirs.dkim, sealedAt(DKIM_PRIVATE_KEY, a.domain.id)]] as const) {
    expect(() => secrets.open(value, at)).toThrow(`does not open as ${at.table}.${at.column} of row ${at.id}: it was altered, copied from another row or column`);
  }
  // The API answers a's webhook with an error, never b's secret; b's own rows still read.
  const read = await call(ingress.url, 'GET', `/webhooks/${a.mailHook.id}`, { key: a.org.key });
  expect(read.status).toBe(500);
  expect(JSON.stringify(read.body)).not.toContain(b.mailHook.secret);
  expect(JSON.stringify(read.body)).not.toContain('whsec_');
  const linkRead = await client(ingress.url, a.ws.key).get(`/api/v1/webhooks/${a.linkHook.id}`);
  expect(linkRead.status).toBe(500);
  expect(JSON.stringify(linkRead.body)).not.toContain(b.linkHook.secret.slice(0, 10));
  expect((await call(ingress.url, 'GET', `/webhooks/${b.mailHook.id}`, { key: b.org.key })).body.signing_secret).toBe(b.mailHook.secret);
  expect((await client(ingress.url, b.ws.key).get(`/api/v1/webhooks/${b.linkHook.id}`)).body.secretHint).toBe(`${b.linkHook.secret.slice(0, 10)}…`);

  // Put back (the reseal below walks every row, and would stop at these).
  await pg.query('DELETE FROM mail_webhook_endpoints WHERE id = $1', [a.mailHook.id]);
  await pg.query('DELETE FROM webhook_endpoints WHERE id = $1', [a.linkHook.id]);
  await pg.query('DELETE FROM mail_domains WHERE id = $1', [a.domain.id]);
});

it('v1 values (sealed before the binding) read as before, and the reseal command rewrites them as v2, bound to their rows', async () => {
  const { pg, secrets, config } = ingress.platform;
  const parsed = parseSecretsKeys(config.SECRETS_KEYS);
  if (!parsed.ok) throw new Error('the test ingress has no SECRETS_KEYS');
  const current = parsed.keys[0]!;
  const [a, b] = await Promise.all([tenant(), tenant()]);
  const pem = secrets.open(await column('mail_domains', 'dkim_private_key', a.domain.id), sealedAt(DKIM_PRIVATE_KEY, a.domain.id));

  // As a release before v2 stored them: the same secrets sealed the old way.
  for (const t of [a, b]) {
    await pg.query('UPDATE mail_webhook_endpoints SET secret = $2, previous_secret = $3 WHERE id = $1', [t.mailHook.id, sealV1(t.mailHook.secret, current), sealV1(`${t.mailHook.secret}-old`, current)]);
    await pg.query('UPDATE webhook_endpoints SET secret = $2 WHERE id = $1', [t.linkHook.id, sealV1(t.linkHook.secret, current)]);
  }
  await pg.query('UPDATE mail_domains SET dkim_private_key = $2 WHERE id = $1', [a.domain.id, sealV1(pem, current)]);
  expect(await column('mail_webhook_endpoints', 'secret', a.mailHook.id)).toMatch(/^sealed:v1:/);
  for (const t of [a, b]) expect((await call(ingress.url, 'GET', `/webhooks/${t.mailHook.id}`, { key: t.org.key })).body.signing_secret).toBe(t.mailHook.secret);

  const child = spawn(process.execPath, ['src/reseal-secrets.ts'], { cwd: ROOT, env: { ...testEnv(), SECRETS_KEYS: config.SECRETS_KEYS } });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const status = await new Promise((resolve) => child.once('exit', resolve));
  expect(status, out).toBe(0);
  expect(out).toMatch(/mail_webhook_endpoints\.secret: 2 resealed/);
  expect(out).toMatch(/mail_webhook_endpoints\.previous_secret: 2 resealed/);
  expect(out).toMatch(/^webhook_endpoints\.secret: 2 resealed/m);
  expect(out).toMatch(/mail_domains\.dkim_private_key: 1 resealed/);

  // Every value now v2, the same secrets through the API, and bound: they open at their row only.
  const { rows } = await pg.query("SELECT count(*)::int AS n FROM (SELECT secret AS v FROM mail_webhook_endpoints UNION ALL SELECT previous_secret FROM mail_webhook_endpoints UNION ALL SELECT secret FROM webhook_endpoints UNION ALL SELECT dkim_private_key FROM mail_domains) s WHERE starts_with(v, 'sealed:v1:')");
  expect(rows[0].n).toBe(0);
  for (const t of [a, b]) expect((await call(ingress.url, 'GET', `/webhooks/${t.mailHook.id}`, { key: t.org.key })).body.signing_secret).toBe(t.mailHook.secret);
  const upgraded = await column('mail_webhook_endpoints', 'previous_secret', a.mailHook.id);
  expect(upgraded).toMatch(new RegExp(`^sealed:v2:${current.id}:`));
  expect(secrets.open(upgraded, sealedAt(MAIL_WEBHOOK_SECRET, a.mailHook.id))).toBe(`${a.mailHook.secret}-old`);
  expect(() => secrets.open(upgraded, sealedAt(MAIL_WEBHOOK_SECRET, b.mailHook.id))).toThrow(/copied from another row or column/);
  expect(secrets.open(await column('mail_domains', 'dkim_private_key', a.domain.id), sealedAt(DKIM_PRIVATE_KEY, a.domain.id))).toBe(pem);
}, 60_000);
