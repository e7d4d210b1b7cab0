// Secrets sealed at rest (src/platform/secrets/): a sending domain and webhook endpoints of both
// products made through the HTTP API leave no DKIM private key and no whsec_ secret in the
// database (its rows read raw, and a pg_dump of it), while the API still shows a secret where it
// did, mail is still DKIM-signed with the domain's key, and webhook requests still verify.
import { execFileSync } from 'node:child_process';
import { createPublicKey, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { verifyWebhook } from '../../../examples/verify-webhook-signature.mjs';
import { DeliveryQueue } from '../../../src/links/webhooks/delivery-queue.ts';
import { linkAttemptHeaders, SIGNATURE_HEADER } from '../../../src/links/webhooks/webhook-signature.ts';
import { MailWebhookDeliveries } from '../../../src/mail/webhooks/mail-webhook-deliveries.ts';
import { standardWebhookHeaders } from '../../../src/platform/webhooks/standard-webhooks.ts';
import type { ClaimedDelivery, Slots } from '../../../src/platform/webhooks/webhook-deliveries.ts';
import { eventually } from '../../support/env.ts';
import { call, client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { dkimVerifies } from '../../support/mail/dkim-verify.ts';
import { organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { startMailSender, stopMailSender } from '../../support/mail/sender.ts';
import { startSmtpCapture, type SmtpCapture } from '../../support/mail/smtp-capture.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';
import type { Child } from '../../support/processes.ts';

// Databases of this file's own: the dump below holds only what this file made, and its sender takes only its mail.
useOwnDatabases();

let ingress: TestIngress;
let relay: SmtpCapture;
let sender: Child | undefined;

beforeAll(async () => {
  ingress = await startIngress();
  relay = await startSmtpCapture();
  sender = await startMailSender({ SMTP_URL: relay.url });
}, 120_000);

afterAll(async () => {
  if (sender) await stopMailSender(sender);
  await relay?.close();
  await ingress?.close();
});

const slots: Slots = { busyOwners: [], busyEndpoints: [], ownerFree: () => 10, endpointFree: () => 10 };

/** Claims the one delivery just queued for this endpoint, as the dispatcher would before an attempt. */
async function claimed(claim: () => Promise<ClaimedDelivery[]>, endpointId: string): Promise<ClaimedDelivery> {
  const found = (await claim()).find((d) => d.endpoint_id === endpointId);
  expect(found).toBeDefined();
  return found!;
}

it('stores DKIM keys and webhook secrets of both products sealed; the API, DKIM signing and webhook signatures work as before', async () => {
  const { pg, secrets } = ingress.platform;

  // The link product: an endpoint, its secret shown once, then rotated (the old one kept for its grace period).
  const ws = await workspaceWithKey(ingress.url);
  const links = client(ingress.url, ws.key);
  const linkHook = await links.post('/api/v1/webhooks', { url: 'https://hooks.example.com/sealed' });
  expect(linkHook.status).toBe(201);
  expect(linkHook.body.secret).toMatch(/^whsec_/);
  const linkRotated = await links.post(`/api/v1/webhooks/${linkHook.body.id}/rotate-secret`);
  expect(linkRotated.body.secret).toMatch(/^whsec_/);
  const linkShown = await links.get(`/api/v1/webhooks/${linkHook.body.id}`);
  expect(linkShown.body.secret).toBeUndefined();
  expect(linkShown.body.secretHint).toBe(`${linkRotated.body.secret.slice(0, 10)}…`);

  // The mail product: a sending domain with its DKIM key pair, and an endpoint, rotated too.
  const org = await organizationWithKey(ingress.url, { rate_limit: 1000 });
  const domain = await verifiedDomain(ingress.url, org.key);
  const mailHook = await call(ingress.url, 'POST', '/webhooks', { key: org.key, body: { endpoint: 'https://hooks.example.com/mail', events: ['email.delivered'] } });
  expect(mailHook.status).toBe(201);
  expect(mailHook.body.signing_secret).toMatch(/^whsec_/);
  const mailRotated = await call(ingress.url, 'POST', `/webhooks/${mailHook.body.id}/signing-secret/rotate`, { key: org.key });
  expect(mailRotated.status).toBe(200);
  // As Resend does, reading a mail webhook shows its current secret.
  expect((await call(ingress.url, 'GET', `/webhooks/${mailHook.body.id}`, { key: org.key })).body.signing_secret).toBe(mailRotated.body.signing_secret);

  // Read raw, every such column holds a value sealed under the first key, which opens to what the API showed.
  const sealed = new RegExp(`^sealed:v2:${secrets.currentKeyId}:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$`);
  const { rows: [linkRow] } = await pg.query('SELECT secret, previous_secret FROM webhook_endpoints WHERE id = $1', [linkHook.body.id]);
  const { rows: [mailRow] } = await pg.query('SELECT secret, previous_secret FROM mail_webhook_endpoints WHERE id = $1', [mailHook.body.id]);
  const { rows: [domainRow] } = await pg.query('SELECT dkim_private_key, dkim_public_key FROM mail_domains WHERE id = $1', [domain.id]);
  for (const value of [linkRow.secret, linkRow.previous_secret, mailRow.secret, mailRow.previous_secret, domainRow.dkim_private_key]) expect(value).toMatch(sealed);
  // Each bound to its row (the previous secret as the row's secret, which it was).
  const linkAt = { table: 'webhook_endpoints', column: 'secret', id: linkHook.body.id };
  const mailAt = { table: 'mail_webhook_endpoints', column: 'secret', id: mailHook.body.id };
  expect([secrets.open(linkRow.secret, linkAt), secrets.open(linkRow.previous_secret, linkAt)]).toEqual([linkRotated.body.secret, linkHook.body.secret]);
  expect([secrets.open(mailRow.secret, mailAt), secrets.open(mailRow.previous_secret, mailAt)]).toEqual([mailRotated.body.signing_secret, mailHook.body.signing_secret]);
  const privateKey = secrets.open(domainRow.dkim_private_key, { table: 'mail_domains', column: 'dkim_private_key', id: domain.id });
  expect(privateKey).toMatch(/^-----BEGIN PRIVATE KEY-----/);
  expect(createPublicKey(privateKey).export({ type: 'spki', format: 'der' }).toString('base64')).toBe(domainRow.dkim_public_key);

  // Nowhere in the whole database: a dump of it has sealed values and no PEM, no whsec_.
  const dump = execFileSync('pg_dump', ['--no-owner', ingress.platform.config.DATABASE_URL], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  expect(dump).toContain(`sealed:v2:${secrets.currentKeyId}:`);
  expect(dump).not.toContain('-----BEGIN');
  expect(dump).not.toContain('PRIVATE KEY');
  expect(dump).not.toContain('whsec_');

  // Mail is DKIM-signed with the domain's key: the signature verifies against the published record.
  const published = (await call(ingress.url, 'GET', `/api/v1/domains/${domain.id}`, { key: org.key })).body.records.find((r: { record: string }) => r.record === 'dkim').value.replace(/^.*p=/, '');
  const sent = await call(ingress.url, 'POST', '/emails', { key: org.key, body: { from: `News <news@${domain.name}>`, to: ['reader@example.net'], subject: 'Sealed', text: 'Hi there', html: '<p>Hi there</p>' } });
  expect(sent.status).toBe(200);
  const message = (await eventually(async () => relay.byMessageId(sent.body.id)[0], 60_000))!;
  expect(dkimVerifies(message.raw, published)).toEqual({ bodyHash: true, signature: true });
  expect(dkimVerifies(message.raw.replace('Hi there', 'Hi thera'), published).bodyHash).toBe(false);
  expect(dkimVerifies(message.raw.replace(/^Subject: Sealed/m, 'Subject: Sealex'), published).signature).toBe(false);

  // Webhook requests are signed with the opened secrets, the current and the previous one.
  const linkQueue = new DeliveryQueue(pg, { baseMs: 1000, factor: 2 }, secrets);
  await linkQueue.enqueue([{ workspaceId: ws.workspaceId, scanId: randomUUID(), timestamp: Date.now(), body: '{"type":"scan.created"}' }]);
  const linkDelivery = await claimed(() => linkQueue.claim(10, slots, 30_000), linkHook.body.id);
  expect(linkDelivery.secrets).toEqual([linkRotated.body.secret, linkHook.body.secret]);
  const linkSignature = linkAttemptHeaders(linkDelivery)[SIGNATURE_HEADER]!;
  for (const secret of [linkRotated.body.secret, linkHook.body.secret]) expect(verifyWebhook(linkDelivery.body, linkSignature, secret)).toBe(true);

  const mailQueue = new MailWebhookDeliveries(pg, [1000], secrets);
  await mailQueue.enqueue([{ organizationId: org.organizationId, eventId: randomUUID(), type: 'email.delivered', occurredAt: Date.now(), body: '{"type":"email.delivered"}' }]);
  const mailDelivery = await claimed(() => mailQueue.claim(10, slots, 30_000), mailHook.body.id);
  expect(mailDelivery.secrets).toEqual([mailRotated.body.signing_secret, mailHook.body.signing_secret]);
  const headers = standardWebhookHeaders(mailDelivery.event_id, mailDelivery.body, mailDelivery.secrets);
  for (const secret of [mailRotated.body.signing_secret, mailHook.body.signing_secret]) expect(new Webhook(secret).verify(mailDelivery.body, headers)).toEqual(JSON.parse(mailDelivery.body));

  // The sender opened the key to sign, and logged none of it.
  expect(sender!.output()).not.toMatch(/PRIVATE KEY|sealed:v[12]|whsec_/);
}, 120_000);
