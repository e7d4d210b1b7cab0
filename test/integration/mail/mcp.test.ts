// The mail product on the MCP endpoint, through the official SDK client
// (Streamable HTTP) against a real ingress, with a mail sender and a relay of
// this file's, and the broadcast worker: a mail key lists the mail tools its
// kind may use and no link tool; an email sent with send_email reaches the
// relay; contacts added with add_contact get a broadcast to their topic, sent
// with send_broadcast, whose report get_broadcast_report reads; each tool
// answers what the REST route answers, refuses what it refuses with the same
// code, and never shows one organization another's ids.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startIngress, type TestIngress } from '../../support/ingress.ts';
import { eventually } from '../../support/env.ts';
import { callOk, callRefused, connectMcp, toolNames, type Mcp } from '../../support/mcp.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { mailKey, organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { startMailSender, stopMailSender } from '../../support/mail/sender.ts';
import { startSmtpCapture, type SmtpCapture } from '../../support/mail/smtp-capture.ts';
import { startWorkerKinds, stopChild, type Child } from '../../support/processes.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';

const SENDING_TOOLS = ['send_email', 'get_email', 'list_emails', 'cancel_email'];
const MAIL_TOOLS = [
  ...SENDING_TOOLS, 'add_contact', 'list_contacts', 'update_contact', 'list_topics', 'list_segments',
  'create_broadcast', 'send_broadcast', 'get_broadcast', 'get_broadcast_report', 'add_suppression',
];
const LINK_TOOLS = ['list_links', 'create_link', 'list_campaigns', 'create_campaign', 'get_analytics', 'get_report', 'get_referrers', 'get_funnel', 'track_conversion'];

let ingress: TestIngress;
let relay: SmtpCapture;
let sender: Child | undefined;
let worker: Child | undefined;

// Its own databases: its sender and broadcast worker take every queued message and due job.
useOwnDatabases();

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_SEC: '1000' });
  relay = await startSmtpCapture();
  [sender, worker] = await Promise.all([startMailSender({ SMTP_URL: relay.url }), startWorkerKinds(['mail-broadcasts'])]);
}, 180_000);

afterAll(async () => {
  await Promise.all([sender && stopMailSender(sender), stopChild(worker)]);
  await relay?.close();
  await ingress?.close();
});

interface Org {
  organizationId: string;
  key: string;
  domain: string;
  from: string;
  mcp: Mcp;
}

/** An organization with a full key (its MCP client connected), a verified domain and an opt-in topic `news`. */
async function organization(): Promise<Org> {
  const org = await organizationWithKey(ingress.url, { rate_limit: 1000 });
  const domain = (await verifiedDomain(ingress.url, org.key)).name;
  const topic = await call(ingress.url, 'POST', '/api/v1/topics', { key: org.key, body: { slug: 'news', name: 'News', default_subscription: 'opt_in' } });
  expect(topic.status).toBe(201);
  return { ...org, domain, from: `News <news@${domain}>`, mcp: await connectMcp(ingress.url, org.key) };
}

const rest = (org: Pick<Org, 'key'>, method: string, path: string, body?: unknown) => call(ingress.url, method, path, { key: org.key, ...(body === undefined ? {} : { body }) });

let a: Org;
let b: Org;

beforeAll(async () => {
  [a, b] = await Promise.all([organization(), organization()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.mcp.close(), b?.mcp.close()]);
});

describe('what a key lists', () => {
  it('a full mail key meets the mail server and lists every mail tool, strict schemas and no link tool', async () => {
    expect(a.mcp.transport.protocolVersion).toBe('2025-06-18');
    expect(a.mcp.client.getServerVersion()).toMatchObject({ name: 'linkmail-mail', version: '1.0.0' });
    expect(a.mcp.client.getInstructions()).toContain('verified domain');
    const { tools } = await a.mcp.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(MAIL_TOOLS);
    for (const t of tools) {
      expect(t.description!.length, t.name).toBeGreaterThan(80);
      expect((t.inputSchema as { additionalProperties?: boolean }).additionalProperties, t.name).toBe(false);
      expect(t.outputSchema?.type, t.name).toBe('object');
      expect(typeof t.annotations?.readOnlyHint, t.name).toBe('boolean');
    }
    // A link tool is no tool of the mail server.
    const linkTool = await a.mcp.client.callTool({ name: 'list_links', arguments: {} }).catch((e: unknown) => e as { code?: number; message: string });
    expect(linkTool).toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool: list_links') });
  });

  it('a link key lists the link tools and no mail tool', async () => {
    const links = await connectMcp(ingress.url, (await workspaceWithKey(ingress.url)).key);
    expect(links.client.getServerVersion()?.name).toBe('linkmail-links');
    expect(await toolNames(links)).toEqual(LINK_TOOLS);
    expect((await links.client.callTool({ name: 'send_email', arguments: {} }).catch((e: unknown) => e as { code?: number })).code).toBe(-32602);
    await links.close();
  });

  it('a send key lists only the sending tools and is refused the others with REST\'s 403 insufficient_permissions', async () => {
    const send = await connectMcp(ingress.url, (await mailKey(ingress.url, a.organizationId, { kind: 'send' })).key);
    expect(await toolNames(send)).toEqual(SENDING_TOOLS);
    for (const [name, args] of [['add_contact', { email: 'x@example.net' }], ['list_topics', {}], ['create_broadcast', {}], ['get_broadcast_report', { id: 'x' }], ['add_suppression', { email: 'x@example.net' }]] as const) {
      const refused = await callRefused(send, name, args);
      // REST's own refusal where REST refuses a send key (manage access); the tool's where only the tool's kinds do (broadcasts, reports).
      expect(refused, name).toMatchObject({ statusCode: 403, name: 'insufficient_permissions', error: { code: 'insufficient_permissions', message: expect.stringContaining('A send key cannot') } });
    }
    // Refused before its arguments are read, as REST checks the key before the body: nothing was made.
    expect((await rest(a, 'GET', '/api/v1/contacts?email=x@example.net')).body.data).toEqual([]);
    // What it may use, it can: an email, followed with get_email.
    const sent = await callOk(send, 'send_email', { from: a.from, to: 'send-key@example.net', subject: 'From a send key', text: 'Hi' });
    expect((await callOk(send, 'get_email', { id: sent.id })).id).toBe(sent.id);
    await send.close();
  });

  it('a test key lists only the broadcast report, as REST lets it read reports and send nothing', async () => {
    const test = await connectMcp(ingress.url, (await mailKey(ingress.url, a.organizationId, { kind: 'test' })).key);
    expect(await toolNames(test)).toEqual(['get_broadcast_report']);
    expect(await callRefused(test, 'send_email', { from: a.from, to: 'x@example.net', subject: 'No', text: 'No' })).toMatchObject({ statusCode: 403, name: 'insufficient_permissions' });
    await test.close();
  });

  it('tool errors of 403, 404 and 409 carry error.details as the documented shape says ([] when no field is at fault)', async () => {
    const c = await organization();
    const send = await connectMcp(ingress.url, (await mailKey(ingress.url, c.organizationId, { kind: 'send' })).key);
    await callOk(c.mcp, 'add_contact', { email: 'details@example.net' });
    const refusals = [
      await callRefused(send, 'add_contact', { email: 'x@example.net' }),
      await callRefused(c.mcp, 'get_email', { id: '00000000-0000-4000-8000-000000000000' }),
      await callRefused(c.mcp, 'add_contact', { email: 'details@example.net' }),
    ];
    expect(refusals.map((r) => [r.statusCode, r.error.code])).toEqual([[403, 'insufficient_permissions'], [404, 'not_found'], [409, 'contact_exists']]);
    for (const r of refusals) {
      expect(Object.keys(r).sort()).toEqual(['error', 'message', 'name', 'statusCode']);
      expect(Object.keys(r.error).sort()).toEqual(['code', 'details', 'message', 'requestId']);
      expect(r.error.details).toEqual([]);
    }
    await Promise.all([send.close(), c.mcp.close()]);
  });
});

describe('sending', () => {
  it('send_email queues an email that reaches the relay; get_email follows it to delivered, as GET /emails/:id answers', async () => {
    const sent = await callOk(a.mcp, 'send_email', { from: a.from, to: ['Reader <reader@example.net>'], cc: 'copy@example.net', subject: 'Spring menu', html: '<p>Hello</p>', text: 'Hello' });
    expect(sent).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), idempotent_replayed: false });
    const arrived = (await eventually(async () => relay.byMessageId(sent.id)[0], 60_000))!;
    expect(arrived.to.sort()).toEqual(['copy@example.net', 'reader@example.net']);
    expect(arrived.raw).toContain('Subject: Spring menu');
    const delivered = await eventually(async () => {
      const email = await callOk(a.mcp, 'get_email', { id: sent.id });
      return email.last_event === 'delivered' ? email : undefined;
    }, 30_000);
    expect(delivered).toMatchObject({ object: 'email', id: sent.id, from: a.from, to: ['Reader <reader@example.net>'], cc: ['copy@example.net'], subject: 'Spring menu', html: '<p>Hello</p>', text: 'Hello' });
    expect(delivered.attempts.at(-1).outcome).toBe('delivered');
    expect(delivered).toEqual((await rest(a, 'GET', `/emails/${sent.id}`)).body);
    // list_emails pages as GET /emails does.
    const page = await callOk(a.mcp, 'list_emails', { limit: 2 });
    expect(page).toEqual((await rest(a, 'GET', '/emails?limit=2')).body);
    expect(page.data.map((e: { id: string }) => e.id)).toContain(sent.id);
  });

  it('an idempotency key replays the first email, through MCP and REST alike, and refuses another request', async () => {
    const body = { from: a.from, to: 'once@example.net', subject: 'Once', text: 'Only once', idempotency_key: `mcp-${Date.now()}` };
    const first = await callOk(a.mcp, 'send_email', body);
    expect(await callOk(a.mcp, 'send_email', body)).toEqual({ id: first.id, idempotent_replayed: true });
    const viaRest = await rest(a, 'POST', '/emails', body);
    expect(viaRest.body).toEqual({ id: first.id });
    expect(viaRest.headers.get('idempotent-replayed')).toBe('true');
    expect(await callRefused(a.mcp, 'send_email', { ...body, subject: 'Another' })).toMatchObject({ statusCode: 409, name: 'invalid_idempotent_request' });
    await eventually(async () => relay.byMessageId(first.id).length === 1, 60_000);
  });

  it('cancel_email stops a scheduled email; a second cancel is 409 not_cancelable in the mail API\'s body', async () => {
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const sent = await callOk(a.mcp, 'send_email', { from: a.from, to: 'later@example.net', subject: 'Later', text: 'Later', scheduled_at: later });
    expect((await callOk(a.mcp, 'get_email', { id: sent.id })).last_event).toBe('scheduled');
    expect(await callOk(a.mcp, 'cancel_email', { id: sent.id })).toEqual({ object: 'email', id: sent.id });
    expect((await rest(a, 'GET', `/emails/${sent.id}`)).body.last_event).toBe('canceled');
    const again = await callRefused(a.mcp, 'cancel_email', { id: sent.id });
    const viaRest = await rest(a, 'POST', `/emails/${sent.id}/cancel`);
    expect(viaRest.status).toBe(409);
    // The mail API's body (our code as name, details always present), with REST's code and message.
    expect(again).toEqual({ statusCode: 409, name: viaRest.body.error.code, message: viaRest.body.message, error: { ...viaRest.body.error, requestId: expect.any(String), details: [] } });
  });

  it('refuses what POST /emails refuses, with its codes and details, and stores nothing', async () => {
    const count = async () => (await ingress.platform.pg.query('SELECT count(*)::int AS n FROM mail_messages WHERE organization_id = $1', [a.organizationId])).rows[0].n;
    const before = await count();
    const cases: [Record<string, unknown>, number, string][] = [
      [{ from: a.from, to: 'x@example.net', text: 'no subject' }, 400, 'validation_failed'],
      [{ from: a.from, to: 'x@example.net', subject: 'Hi', text: 'Hi', attachments: [] }, 400, 'unknown_field'],
      [{ from: 'news@unverified.example.org', to: 'x@example.net', subject: 'Hi', text: 'Hi' }, 422, 'from_domain_not_verified'],
      [{ from: a.from, to: Array.from({ length: 51 }, (_, i) => `r${i}@example.net`), subject: 'Hi', text: 'Hi' }, 400, 'too_many_recipients'],
      [{ from: a.from, to: 'x@example.net', subject: 'Hi' }, 400, 'missing_content'],
    ];
    for (const [args, status, code] of cases) {
      const refused = await callRefused(a.mcp, 'send_email', args);
      expect(refused, code).toMatchObject({ statusCode: status, name: code, error: { code } });
      if (code === 'unknown_field') continue;
      const viaRest = await rest(a, 'POST', '/emails', args);
      // REST's code is in error.code (at the root its name is Resend's).
      expect([viaRest.status, viaRest.body.error.code], code).toEqual([status, code]);
      // A missing argument is named by its own pointer (REST names the body that lacks it).
      if (code !== 'validation_failed') expect(refused.error.details, code).toEqual(viaRest.body.error.details);
    }
    expect((await callRefused(a.mcp, 'send_email', cases[0]![0])).error.details).toEqual([{ path: '/subject', message: 'must have required property \'subject\'' }]);
    expect(await count()).toBe(before);
  });
});

describe('audience and broadcasts', () => {
  it('add_contact, list_contacts and update_contact answer as /api/v1/contacts, refusing what it refuses', async () => {
    const added = await callOk(a.mcp, 'add_contact', { email: 'Ada@Example.net', first_name: 'Ada', properties: { plan: 'pro' } });
    expect(added).toMatchObject({ object: 'contact', email: 'ada@example.net', first_name: 'Ada', properties: { plan: 'pro' }, status: 'subscribed' });
    expect(added).toEqual((await rest(a, 'GET', `/api/v1/contacts/${added.id}`)).body);
    expect(await callRefused(a.mcp, 'add_contact', { email: 'ada@example.net' })).toMatchObject({ statusCode: 409, name: 'contact_exists' });
    expect(await callRefused(a.mcp, 'add_contact', { email: 'not an address' })).toMatchObject({ statusCode: 400, name: 'invalid_email' });

    const found = await callOk(a.mcp, 'list_contacts', { email: 'ADA@example.net' });
    expect(found.data).toEqual([added]);
    expect(found).toEqual((await rest(a, 'GET', '/api/v1/contacts?email=ada@example.net')).body);

    const changed = await callOk(a.mcp, 'update_contact', { contact: 'ada@example.net', last_name: 'Lovelace', properties: { plan: 'team' } });
    expect(changed).toMatchObject({ id: added.id, first_name: 'Ada', last_name: 'Lovelace', properties: { plan: 'team' } });
    expect(changed).toEqual((await rest(a, 'GET', `/api/v1/contacts/${added.id}`)).body);
    expect(await callRefused(a.mcp, 'update_contact', { contact: added.id })).toMatchObject({ statusCode: 400, name: 'validation_failed' });
    expect(await callRefused(a.mcp, 'update_contact', { contact: 'nobody@example.net', status: 'unsubscribed' })).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect(await callRefused(a.mcp, 'update_contact', { contact: added.id, nickname: 'A' })).toMatchObject({ statusCode: 400, name: 'unknown_field', error: { details: [{ path: '/nickname' }] } });
  });

  it('a broadcast created and sent with the tools reaches the topic\'s subscribed contacts, and its report counts them', async () => {
    for (const [email, first_name] of [['b1@example.net', 'Bea'], ['b2@example.net', 'Bo'], ['b3@example.net', 'Bill']]) {
      await callOk(a.mcp, 'add_contact', { email, first_name });
    }
    await callOk(a.mcp, 'update_contact', { contact: 'b3@example.net', status: 'unsubscribed' });
    await callOk(a.mcp, 'update_contact', { contact: 'ada@example.net', status: 'unsubscribed' });
    const suppressed = await callOk(a.mcp, 'add_suppression', { email: 'b2@example.net' });
    expect(suppressed).toMatchObject({ object: 'suppression', email: 'b2@example.net', reason: 'manual', created: true });
    expect(await callOk(a.mcp, 'add_suppression', { email: 'B2@example.net', reason: 'bounce' })).toMatchObject({ id: suppressed.id, reason: 'manual', created: false });
    await callOk(a.mcp, 'add_contact', { email: 'b4@example.net', first_name: 'Bex' });

    const topics = await callOk(a.mcp, 'list_topics');
    expect(topics.data.map((t: { slug: string }) => t.slug)).toEqual(['news']);
    expect(topics).toEqual((await rest(a, 'GET', '/api/v1/topics')).body);
    const segment = await rest(a, 'POST', '/api/v1/segments', { name: 'Everyone', filter: { field: 'email', op: 'contains', value: '@' } });
    expect(segment.status).toBe(201);
    const segments = await callOk(a.mcp, 'list_segments');
    expect(segments.data.map((s: { id: string }) => s.id)).toEqual([segment.body.id]);

    const draft = await callOk(a.mcp, 'create_broadcast', { name: 'Spring', from: a.from, topic: 'news', subject: 'Hello {{contact.first_name}}', text: 'Hi {{contact.first_name}}' });
    expect(draft).toMatchObject({ object: 'broadcast', status: 'draft', topic: 'news', domain: a.domain });
    expect(draft).toEqual((await rest(a, 'GET', `/api/v1/broadcasts/${draft.id}`)).body);
    expect((await callOk(a.mcp, 'send_broadcast', { id: draft.id })).id).toBe(draft.id);
    expect(await callRefused(a.mcp, 'send_broadcast', { id: draft.id })).toMatchObject({ statusCode: 409, name: 'not_schedulable' });

    const sent = await eventually(async () => {
      const broadcast = await callOk(a.mcp, 'get_broadcast', { id: draft.id });
      return broadcast.status === 'sent' ? broadcast : undefined;
    }, 60_000);
    expect(sent.stats).toMatchObject({ eligible: 2, suppressed: 1 });
    // One message each for the subscribed, unsuppressed contacts, personalised.
    const mine = () => relay.messages.filter((m) => /^b\d@example\.net$/.test(m.to[0] ?? ''));
    await eventually(async () => mine().length === 2, 60_000);
    expect(mine().map((m) => m.to[0]).sort()).toEqual(['b1@example.net', 'b4@example.net']);
    expect(mine().find((m) => m.to[0] === 'b1@example.net')!.raw).toContain('Subject: Hello Bea');

    const report = await eventually(async () => {
      const r = await callOk(a.mcp, 'get_broadcast_report', { id: draft.id });
      return r.totals.sent === 2 ? r : undefined;
    }, 60_000);
    expect(report).toMatchObject({ object: 'broadcast_report', broadcast_id: draft.id, status: 'sent', totals: { recipients: 2, sent: 2, queued: 0 } });
    const viaRest = (await rest(a, 'GET', `/api/v1/broadcasts/${draft.id}/report`)).body;
    expect(report).toEqual({ ...viaRest, generated_at: expect.any(String) });
    // A test key of the organization reads the report too.
    const test = await connectMcp(ingress.url, (await mailKey(ingress.url, a.organizationId, { kind: 'test' })).key);
    expect((await callOk(test, 'get_broadcast_report', { id: draft.id })).totals).toEqual(report.totals);
    await test.close();
  });

  it('create_broadcast refuses what POST /api/v1/broadcasts refuses, with its codes', async () => {
    const base = { name: 'Bad', from: a.from, topic: 'news', subject: 'Hi', text: 'Hi' };
    const cases: [Record<string, unknown>, number, string][] = [
      [{ ...base, topic: 'nope' }, 422, 'topic_not_found'],
      [{ ...base, text: undefined }, 400, 'missing_content'],
      [{ ...base, ab_test: { percent: 20, wait_minutes: 60, metric: 'opens' } }, 422, 'subject_b_required'],
      [{ ...base, segment_id: '00000000-0000-4000-8000-000000000000' }, 422, 'segment_not_found'],
      [{ ...base, from: 'news@unverified.example.org' }, 422, 'from_domain_not_verified'],
      [{ ...base, name: '' }, 400, 'validation_failed'],
    ];
    for (const [args, status, code] of cases) {
      const body = JSON.parse(JSON.stringify(args));
      expect(await callRefused(a.mcp, 'create_broadcast', body), code).toMatchObject({ statusCode: status, name: code });
      const viaRest = await rest(a, 'POST', '/api/v1/broadcasts', body);
      // REST's code is in error.code (at the root its name is Resend's).
      expect([viaRest.status, viaRest.body.error.code], code).toEqual([status, code]);
    }
  });
});

describe('two organizations', () => {
  it('never see each other\'s ids through any tool', async () => {
    // What organization a has: an email, a contact, a broadcast, a segment.
    const email = await callOk(a.mcp, 'send_email', { from: a.from, to: 'private@example.net', subject: 'Private', text: 'Private', scheduled_at: new Date(Date.now() + 3_600_000).toISOString() });
    const contact = await callOk(a.mcp, 'add_contact', { email: 'private@example.net' });
    const broadcast = await callOk(a.mcp, 'create_broadcast', { name: 'Private', from: a.from, topic: 'news', subject: 'Private', text: 'Private' });
    const segment = (await rest(a, 'POST', '/api/v1/segments', { name: 'Private', filter: { field: 'email', op: 'contains', value: 'private' } })).body;

    const notFound = { statusCode: 404, name: 'not_found' };
    expect(await callRefused(b.mcp, 'get_email', { id: email.id })).toMatchObject(notFound);
    expect(await callRefused(b.mcp, 'cancel_email', { id: email.id })).toMatchObject(notFound);
    expect(await callRefused(b.mcp, 'update_contact', { contact: contact.id, first_name: 'Mallory' })).toMatchObject(notFound);
    expect(await callRefused(b.mcp, 'update_contact', { contact: 'private@example.net', first_name: 'Mallory' })).toMatchObject(notFound);
    for (const tool of ['get_broadcast', 'send_broadcast', 'get_broadcast_report']) {
      expect(await callRefused(b.mcp, tool, { id: broadcast.id }), tool).toMatchObject(notFound);
    }
    expect(await callRefused(b.mcp, 'list_emails', { after: email.id })).toMatchObject({ statusCode: 400, name: 'invalid_cursor' });
    expect(await callRefused(b.mcp, 'create_broadcast', { name: 'X', from: b.from, topic: 'news', subject: 'X', text: 'X', segment_id: segment.id })).toMatchObject({ statusCode: 422, name: 'segment_not_found' });
    expect(await callRefused(b.mcp, 'send_email', { from: a.from, to: 'x@example.net', subject: 'X', text: 'X' })).toMatchObject({ statusCode: 422, name: 'from_domain_not_verified' });

    // Its lists hold none of a's ids, and a's things are unchanged.
    const aIds = new Set([email.id, contact.id, broadcast.id, segment.id]);
    for (const tool of ['list_emails', 'list_contacts', 'list_topics', 'list_segments']) {
      const page = await callOk(b.mcp, tool, { limit: 100 });
      expect(page.data.filter((item: { id: string }) => aIds.has(item.id)), tool).toEqual([]);
    }
    expect(await callOk(b.mcp, 'list_contacts', { email: 'private@example.net' })).toMatchObject({ data: [] });
    expect((await callOk(a.mcp, 'get_email', { id: email.id })).last_event).toBe('scheduled');
    expect((await callOk(a.mcp, 'get_broadcast', { id: broadcast.id })).status).toBe('draft');
    expect((await callOk(a.mcp, 'list_contacts', { email: 'private@example.net' })).data[0].first_name).toBeNull();
  });
});

describe('HTTP refusals and discovery', () => {
  it('a bad mail key gets the mail API\'s 401 invalid_api_key before any JSON-RPC', async () => {
    const res = await call(ingress.url, 'POST', '/api/mcp', { key: `mk_live_${'x'.repeat(32)}`, headers: { accept: 'application/json' }, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_api_key');
  });

  it('GET /.well-known/mcp.json describes both products, the mail tools with the keys that may use them', async () => {
    const doc = (await (await fetch(`${ingress.url}/.well-known/mcp.json`)).json()) as any;
    expect(doc.products.map((p: { product: string }) => p.product)).toEqual(['links', 'mail']);
    const mail = doc.products[1];
    expect(mail).toMatchObject({ name: 'linkmail-mail', rateLimit: { requests: 1000, windowSeconds: 1, scope: 'key' } });
    const { tools } = await a.mcp.client.listTools();
    expect(mail.tools.map(({ keys: _, ...t }: { keys: string[] }) => t)).toEqual(tools.map((t) => ({ name: t.name, title: t.title, description: t.description })));
    const keysOf = Object.fromEntries(mail.tools.map((t: { name: string; keys: string[] }) => [t.name, t.keys]));
    expect(keysOf.send_email).toEqual(['full', 'send']);
    expect(keysOf.add_contact).toEqual(['full']);
    expect(keysOf.get_broadcast_report).toEqual(['full', 'test']);
    expect(doc.products[0].tools.map((t: { name: string }) => t.name)).toEqual(LINK_TOOLS);
  });
});
