// The service on a three-node Kafka cluster of this file's own (replication factor 3,
// min.insync.replicas 2) while its brokers die and hang under load:
//   - a broker killed with SIGKILL during 3,000 redirects, a 5,000-contact broadcast fan-out, and
//     scan and mail webhooks being delivered: every redirect 302, ClickHouse rows = distinct scan ids
//     = 3,000, exactly one message per contact, every scan (of the workspaces with a webhook) and
//     every mail event delivered at least once;
//   - once it is back and in sync, the leader of most `scans` partitions stopped with SIGSTOP for 20 s
//     during 3,000 more redirects: the same.
// An ingress (in this process) and one worker process with the kinds these paths need, on the file's
// own databases: its workers take every queued job they see.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inStrings, sql } from '../../../src/platform/clickhouse/literal.ts';
import { topicsAsKnownBy } from '../../../src/platform/kafka/broker-metadata.ts';
import { prefixed } from '../../../src/platform/kafka/topic-definition.ts';
import { scansTopic } from '../../../topics/scans.ts';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { eventually, testConfig } from '../../support/env.ts';
import { NODES, sharedTestCluster, type Node, type TestCluster } from '../../support/kafka-cluster.ts';
import { redirectLoad } from '../../support/links/redirect-load.ts';
import { makeTestCa, type TestCa } from '../../support/links/test-ca.ts';
import { Receivers, type Receiver } from '../../support/links/webhook-receiver.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { broadcastHelpers, type Org } from '../../support/mail/broadcasts.ts';
import { emitMailEvents } from '../../support/mail/webhooks.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';
import { startTs, stopChild, waitForOutput, type Child } from '../../support/processes.ts';

const REDIRECTS = 3000;
const CONTACTS = 5000;
/** At most: mail events are emitted while the redirects go on. */
const MAIL_EVENTS = 1000;
/** Workspaces with a link each, so the redirects spread over the scans partitions. */
const WORKSPACES = 6;
/** Of them, those with a scan webhook: a third of the scans are delivered (the dispatcher's pace on this machine bounds the file's length). */
const HOOKED = 2;
const STOP_MS = 20_000;

let ca: TestCa;
let cluster: TestCluster;
let ingress: TestIngress;
let workers: Child;
const receivers = new Receivers(() => ca);

useOwnDatabases();

beforeAll(async () => {
  ca = makeTestCa();
  cluster = await sharedTestCluster();
  ingress = await startIngress({ ...cluster.env, API_RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_HOSTS: '127.0.0.1' });
  workers = startTs('workers/run.ts', ['links-scan-sink', 'links-webhooks', 'mail-broadcasts', 'mail-webhooks'], {
    ...cluster.env,
    LOG_LEVEL: 'info',
    METRICS_PORT: '0',
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
    WEBHOOK_CA_FILE: ca.caFile,
    WEBHOOK_POLL_MS: '50',
    MAIL_FANOUT_BATCH: '250',
  });
  await waitForOutput(workers, 'worker process ready', 180_000);
}, 300_000);

afterAll(async () => {
  await stopChild(workers);
  await receivers.closeAll();
  await ingress?.close();
  await cluster?.release();
}, 120_000);

const scansTopicName = () => prefixed(testConfig().TOPIC_PREFIX, scansTopic.name);

/** The node leading most `scans` partitions, as `asking` sees it. */
async function leaderOfMostScans(asking: Node): Promise<Node> {
  const [topic] = await topicsAsKnownBy('127.0.0.1', cluster.portOf(asking), [scansTopicName()]);
  const led = NODES.map((node) => topic!.leaders.filter((l) => l === node).length);
  return NODES[led.indexOf(Math.max(...led))]!;
}

/** Whether every partition of the service's topics has all three replicas in sync. */
async function allInSync(): Promise<boolean> {
  const admin = ingress.platform.kafkaAdmin;
  const topics = (await admin.listTopics()).filter((t) => t.startsWith(`${testConfig().TOPIC_PREFIX}.`));
  const { topics: meta } = await admin.fetchTopicMetadata({ topics });
  return meta.every((t) => t.partitions.every((p) => p.isr.length === 3 && p.leader >= 0));
}

interface Links {
  workspaceIds: string[];
  shortIds: string[];
  /** The workspaces with a scan webhook. */
  hooked: string[];
}

/** Workspaces with a link each; the first `hooked` with a scan.created webhook to `hook`. */
async function links(hooked = 0, hook?: Receiver): Promise<Links> {
  const made = await Promise.all(Array.from({ length: WORKSPACES }, async (_, i) => {
    const ws = await workspaceWithKey(ingress.url);
    if (i < hooked) {
      const endpoint = await call(ingress.url, 'POST', '/api/v1/webhooks', { key: ws.key, body: { url: hook!.url } });
      expect(endpoint.status).toBe(201);
    }
    const link = await call(ingress.url, 'POST', '/api/v1/links', { key: ws.key, body: { destination: 'https://example.com/faults' } });
    expect(link.status).toBe(201);
    return { workspaceId: ws.workspaceId, shortId: link.body.shortId as string };
  }));
  await eventually(async () => made.every((l) => ingress.app.redirects.cache.get(l.shortId) !== undefined), 10_000, 20);
  return { workspaceIds: made.map((m) => m.workspaceId), shortIds: made.map((m) => m.shortId), hooked: made.slice(0, hooked).map((m) => m.workspaceId) };
}

/** `REDIRECTS` redirects over the links, 30 every 200 ms. */
const redirect = (made: Links) => redirectLoad(ingress.url, made.shortIds, { total: REDIRECTS, perRound: 30, everyMs: 200, boundMs: 180_000 });

/** The scans ClickHouse holds for these workspaces: rows and distinct scan ids. */
async function storedScans(made: Links): Promise<{ rows: number; ids: number }> {
  const [row] = await ingress.platform.clickhouse.rows<{ rows: string; ids: string }>(
    sql`SELECT count() AS rows, uniqExact(scan_id) AS ids FROM scans WHERE workspace_id IN ${inStrings(made.workspaceIds)}`,
  );
  return { rows: Number(row!.rows), ids: Number(row!.ids) };
}

/** Every scan of these workspaces stored once, and each of the hooked workspaces' delivered to `hook` at least once. */
async function expectEveryScanOnce(made: Links, total: number, hook?: Receiver): Promise<void> {
  await eventually(async () => (await storedScans(made)).rows >= total, 90_000, 500);
  // Anything doubled would land with the rest (a sink's batch), not seconds later; a moment makes sure.
  await new Promise((r) => setTimeout(r, 2000));
  expect(await storedScans(made)).toEqual({ rows: total, ids: total });
  if (!hook) return;
  const [row] = await ingress.platform.clickhouse.rows<{ ids: string[] }>(sql`SELECT groupArray(scan_id) AS ids FROM scans WHERE workspace_id IN ${inStrings(made.hooked)}`);
  const delivered = () => new Set(hook.received.map((r) => JSON.parse(r.body).data.scanId as string));
  await eventually(async () => delivered().size >= row!.ids.length, 90_000, 500);
  expect(delivered()).toEqual(new Set(row!.ids));
}

it('loses and doubles nothing while a broker is killed during redirects, a 5,000-contact fan-out and webhook deliveries', async () => {
  const { api, organization, contacts, create, until } = broadcastHelpers(() => ingress.url);
  const scanHook = await receivers.start(() => 200);
  const made = await links(HOOKED, scanHook);

  // The mail side: an organization with 5,000 contacts, a broadcast, and a mail webhook for clicks on a message.
  const org: Org = await organization();
  await contacts(org, CONTACTS, 'bf');
  const mailHook = await receivers.start(() => 200);
  const webhook = await api(org, 'POST', '/webhooks', { endpoint: mailHook.url, events: ['email.clicked'] });
  expect(webhook.status).toBe(201);
  const email = await api(org, 'POST', '/emails', { from: org.from, to: ['reader@example.net'], subject: 'Faults', text: 'Hi' });
  expect(email.status).toBe(200);
  const broadcast = await create(org);

  const redirects = redirect(made);
  // Mail events all along the redirects: 5 every 250 ms, each recorded and published by the ingress as the product does.
  const mailEvents: string[] = [];
  const emitting = (async () => {
    while (redirects.sent() < REDIRECTS && mailEvents.length < MAIL_EVENTS) {
      const batch = Array.from({ length: 5 }, (_, j) => ({ organization_id: org.organizationId, message_id: email.body.id as string, type: 'clicked' as const, url: `https://example.com/item/${mailEvents.length + j}` }));
      mailEvents.push(...(await emitMailEvents(ingress.platform, batch)));
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  await eventually(async () => redirects.sent() >= REDIRECTS / 5, 60_000, 50);
  const since = workers.output().length;
  expect((await api(org, 'POST', `/api/v1/broadcasts/${broadcast.id}/send`)).status).toBe(200);
  await waitForOutput(workers, `"broadcast fan-out"`, 30_000);
  expect(workers.output().slice(since)).toContain(broadcast.id);

  const victim = await leaderOfMostScans(1);
  await cluster.kill(victim);
  // The fault landed amid the fan-out and the redirects.
  const recipientsAtKill = (await ingress.platform.pg.query<{ n: number }>('SELECT count(*)::int AS n FROM mail_broadcast_recipients WHERE broadcast_id = $1', [broadcast.id])).rows[0]!.n;
  expect({ recipientsAtKill: recipientsAtKill < CONTACTS, redirectsAtKill: redirects.sent() < REDIRECTS }).toEqual({ recipientsAtKill: true, redirectsAtKill: true });

  expect(await redirects.done).toEqual({ 302: REDIRECTS });
  await emitting;
  const sent = await until(org, broadcast.id, 'sent', 120_000);
  expect(sent.stats).toMatchObject({ eligible: CONTACTS, queued: CONTACTS, skipped: 0 });
  const { rows: [mail] } = await ingress.platform.pg.query<{ recipients: number; contacts: number; messages: number; addresses: number }>(
    `SELECT (SELECT count(*)::int FROM mail_broadcast_recipients WHERE broadcast_id = $1) AS recipients,
            (SELECT count(DISTINCT contact_id)::int FROM mail_broadcast_recipients WHERE broadcast_id = $1) AS contacts,
            (SELECT count(*)::int FROM mail_messages WHERE organization_id = $2 AND id <> $3) AS messages,
            (SELECT count(DISTINCT to_addresses)::int FROM mail_messages WHERE organization_id = $2 AND id <> $3) AS addresses`,
    [broadcast.id, org.organizationId, email.body.id],
  );
  expect(mail).toEqual({ recipients: CONTACTS, contacts: CONTACTS, messages: CONTACTS, addresses: CONTACTS });

  await expectEveryScanOnce(made, REDIRECTS, scanHook);
  const delivered = () => new Set(mailHook.received.map((r) => String(r.headers['webhook-id'])));
  await eventually(async () => delivered().size >= mailEvents.length, 90_000, 500);
  expect(delivered()).toEqual(new Set(mailEvents));
}, 420_000);

it('loses and doubles nothing while the leader of most scans partitions hangs for 20 s during redirects', async () => {
  // The killed broker back, and in sync: with one of three replicas out, min.insync.replicas 2 leaves no room for another.
  await cluster.restart();
  await eventually(allInSync, 120_000, 1000);

  const made = await links();
  const redirects = redirect(made);
  await eventually(async () => redirects.sent() >= REDIRECTS / 10, 60_000, 50);
  const victim = await leaderOfMostScans(1);
  cluster.pause(victim);
  expect(redirects.sent()).toBeLessThan(REDIRECTS);
  await new Promise((r) => setTimeout(r, STOP_MS));
  cluster.resume(victim);

  expect(await redirects.done).toEqual({ 302: REDIRECTS });
  await expectEveryScanOnce(made, REDIRECTS);
}, 300_000);
