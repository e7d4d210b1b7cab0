// Contact properties on every face that writes contacts: Resend's root (through Resend's SDK),
// /api/v1, the import and the MCP tools (through the MCP SDK client). Concurrent merges at the
// root keep every key, and a declared property's type is checked on each face with one code.
import { Resend } from 'resend';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../support/env.ts';
import { holdWrite } from '../../support/held-transaction.ts';
import { call } from '../../support/ingress.ts';
import { callOk, callRefused, connectMcp, type Mcp } from '../../support/mcp.ts';
import { organizationWithKey } from '../../support/mail/organizations.ts';
import { useResendIngress } from '../../support/mail/resend-ingress.ts';

const root = useResendIngress();
const opened: Mcp[] = [];
afterAll(async () => Promise.all(opened.map((m) => m.close())));

/** An organization with its SDK client and a declared number property `seats`. */
const fresh = async () => {
  const org = await organizationWithKey(root.url);
  const resend = new Resend(org.key);
  expect((await resend.contactProperties.create({ key: 'seats', type: 'number', fallbackValue: 1 })).error).toBeNull();
  return { ...org, resend };
};

const propertiesOf = async (key: string, id: string) => (await call(root.url, 'GET', `/api/v1/contacts/${id}`, { key })).body.properties;

describe('contacts.update merges properties without losing a concurrent update', () => {
  it('eight rounds of two concurrent updates of different properties keep all sixteen', async () => {
    const { resend, key } = await fresh();
    const id = (await resend.contacts.create({ email: 'ada@example.net' })).data!.id;
    for (let round = 0; round < 8; round++) {
      const answers = await Promise.all(['a', 'b'].map((side) => resend.contacts.update({ id, properties: { [`${side}${round}`]: `${side}-${round}` } })));
      expect(answers.map((a) => a.error)).toEqual([null, null]);
    }
    const expected = Object.fromEntries([...Array(8).keys()].flatMap((r) => [[`a${r}`, `a-${r}`], [`b${r}`, `b-${r}`]]));
    expect(await propertiesOf(key, id)).toEqual(expected);
  });

  it('two updates that both read the contact before either writes keep both properties', async () => {
    const { resend, key } = await fresh();
    const id = (await resend.contacts.create({ email: 'ada@example.net', properties: { plan: 'pro' } })).data!.id;
    // Both updates reach the contact while another transaction holds its row: neither may write what it read before the other's write.
    const held = await holdWrite(root.ingress.platform.pg, 'UPDATE mail_contacts SET updated_at = now() WHERE id = $1', [id]);
    const updating = [resend.contacts.update({ id, properties: { color: 'red' } }), resend.contacts.update({ id, properties: { size: 'L', plan: null } })];
    await held.untilBlocking();
    // The second waits behind the first (on the row's tuple lock), not on the held transaction itself.
    await eventually(async () => (await root.ingress.platform.pg.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rowCount! >= 2, 10_000);
    await held.commit();
    expect((await Promise.all(updating)).map((a) => a.error)).toEqual([null, null]);
    expect(await propertiesOf(key, id)).toEqual({ color: 'red', size: 'L' });
  });

  it('a merge that would pass the limit of 100 properties is refused and changes nothing', async () => {
    const { resend, key } = await fresh();
    const ninety = Object.fromEntries([...Array(90).keys()].map((i) => [`p${i}`, i]));
    const id = (await resend.contacts.create({ email: 'ada@example.net', properties: ninety })).data!.id;
    const over = await resend.contacts.update({ id, properties: Object.fromEntries([...Array(11).keys()].map((i) => [`q${i}`, i])) });
    expect(over.error).toMatchObject({ statusCode: 400, name: 'validation_error' });
    expect((over.error as any).error.code).toBe('invalid_properties');
    expect(await propertiesOf(key, id)).toEqual(ninety);
  });
});

describe('a declared property\'s type is checked on every face, with one code', () => {
  it('the root, /api/v1, the import and the MCP tools refuse a string for a number property', async () => {
    const { resend, key } = await fresh();
    const expectRefused = (body: any, status: number) => {
      expect(body.statusCode).toBe(status);
      expect(body.error.code).toBe('invalid_property_type');
      expect(body.error.details).toEqual([{ path: '/properties/seats', message: 'must be a number' }]);
    };

    // Resend's root face.
    const made = await resend.contacts.create({ email: 'root@example.net', properties: { seats: 'many' } });
    expect(made.error).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expectRefused(made.error, 422);
    const id = (await resend.contacts.create({ email: 'root@example.net', properties: { seats: 3 } })).data!.id;
    expectRefused((await resend.contacts.update({ id, properties: { seats: 'many' } })).error, 422);

    // /api/v1.
    const created = await call(root.url, 'POST', '/api/v1/contacts', { key, body: { email: 'v1@example.net', properties: { seats: 'many' } } });
    expect(created.status).toBe(422);
    expectRefused(created.body, 422);
    const changed = await call(root.url, 'PATCH', `/api/v1/contacts/${id}`, { key, body: { properties: { seats: 'many' } } });
    expect(changed.status).toBe(422);
    expectRefused(changed.body, 422);

    // The import: the row is rejected alone with the code; a CSV cell is read as the declared number.
    const ndjson = await call(root.url, 'POST', '/api/v1/contacts/import', {
      key, raw: '{"email":"n1@example.net","properties":{"seats":"many"}}\n{"email":"n2@example.net","properties":{"seats":2}}\n', headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(ndjson.body).toMatchObject({ rows: 2, created: 1, rejected: 1, errors: [{ line: 1, code: 'invalid_property_type' }] });
    const csv = await call(root.url, 'POST', '/api/v1/contacts/import', { key, raw: 'email,seats\nc1@example.net,many\nc2@example.net,4\n', headers: { 'content-type': 'text/csv' } });
    expect(csv.body).toMatchObject({ rows: 2, created: 1, rejected: 1, errors: [{ line: 2, code: 'invalid_property_type' }] });
    expect((await call(root.url, 'GET', '/api/v1/contacts/c2@example.net', { key })).body.properties).toEqual({ seats: 4 });

    // The MCP tools.
    const mcp = await connectMcp(root.url, key);
    opened.push(mcp);
    expectRefused(await callRefused(mcp, 'add_contact', { email: 'mcp@example.net', properties: { seats: 'many' } }), 422);
    expectRefused(await callRefused(mcp, 'update_contact', { contact: id, properties: { seats: 'many' } }), 422);
    expect((await callOk(mcp, 'update_contact', { contact: id, properties: { seats: 7 } })).properties).toEqual({ seats: 7 });

    // Nothing refused was written.
    const emails = (await call(root.url, 'GET', '/api/v1/contacts', { key })).body.data.map((c: { email: string }) => c.email).sort();
    expect(emails).toEqual(['c2@example.net', 'n2@example.net', 'root@example.net']);
  });

  it('another organization\'s declaration does not apply', async () => {
    await fresh();
    const other = await organizationWithKey(root.url);
    const made = await call(root.url, 'POST', '/api/v1/contacts', { key: other.key, body: { email: 'ada@example.net', properties: { seats: 'many' } } });
    expect(made.status).toBe(201);
  });
});

describe('MCP update_contact', () => {
  it('takes unsubscribed as Resend\'s MCP server does, and status still', async () => {
    const { key } = await fresh();
    const mcp = await connectMcp(root.url, key);
    opened.push(mcp);
    const made = await callOk(mcp, 'add_contact', { email: 'ada@example.net' });
    expect((await callOk(mcp, 'update_contact', { contact: made.id, unsubscribed: true })).status).toBe('unsubscribed');
    expect((await call(root.url, 'GET', `/contacts/${made.id}`, { key })).body.unsubscribed).toBe(true);
    expect((await callOk(mcp, 'update_contact', { contact: 'ada@example.net', unsubscribed: false })).status).toBe('subscribed');
    expect((await callOk(mcp, 'update_contact', { contact: made.id, status: 'unsubscribed' })).status).toBe('unsubscribed');
    const contradicting = await callRefused(mcp, 'update_contact', { contact: made.id, unsubscribed: false, status: 'unsubscribed' });
    expect(contradicting.error.code).toBe('validation_failed');
    expect((await call(root.url, 'GET', `/api/v1/contacts/${made.id}`, { key })).body.status).toBe('unsubscribed');
  });
});
