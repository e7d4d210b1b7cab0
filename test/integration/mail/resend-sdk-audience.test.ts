// Resend's SDK (unmodified, RESEND_BASE_URL at the test ingress) on the audience at
// the root paths: contacts by id and by email, their segments and topics, contact
// properties, segments and topics. Results are checked, also through /api/v1 (one
// store), and one organization never sees or touches another's.
import { Resend } from 'resend';
import { describe, expect, it } from 'vitest';
import { call } from '../../support/ingress.ts';
import { useResendIngress } from '../../support/mail/resend-ingress.ts';
import { organizationWithKey } from '../../support/mail/organizations.ts';
import { holdWrite } from '../../support/held-transaction.ts';

const root = useResendIngress();

const fresh = async () => {
  const org = await organizationWithKey(root.url);
  return { ...org, resend: new Resend(org.key) };
};

describe('resend.topics', () => {
  it('creates a topic without a slug (derived from the name), gets, lists, updates and removes it', async () => {
    const { resend, key } = await fresh();
    const created = await resend.topics.create({ name: 'Product News!', description: 'What we ship', defaultSubscription: 'opt_in' });
    expect(created.error).toBeNull();
    const id = created.data!.id;
    expect((await resend.topics.get(id)).data).toMatchObject({ object: 'topic', id, name: 'Product News!', slug: 'product-news', description: 'What we ship', default_subscription: 'opt_in' });
    // The same name again: the next free slug.
    const again = await resend.topics.create({ name: 'product news', defaultSubscription: 'opt_out' });
    expect((await resend.topics.get(again.data!.id)).data).toMatchObject({ slug: 'product-news-2' });
    const listed = await resend.topics.list();
    expect((listed.data as any).object).toBe('list');
    expect(listed.data!.data.map((t) => t.id)).toEqual([again.data!.id, id]);

    expect((await resend.topics.update({ id, name: 'Releases', description: 'Every release' })).data).toMatchObject({ id });
    expect((await resend.topics.get(id)).data).toMatchObject({ name: 'Releases', description: 'Every release', slug: 'product-news' });
    // /api/v1 sees the same topic, by its slug.
    expect((await call(root.url, 'GET', '/api/v1/topics/product-news', { key })).body).toMatchObject({ id, name: 'Releases', default_subscription: 'opt_in' });

    expect((await resend.topics.remove(id)).data).toEqual({ object: 'topic', id, deleted: true });
    expect((await resend.topics.get(id)).error).toMatchObject({ name: 'not_found', statusCode: 404 });
    expect((await resend.topics.create({ name: 'x' } as any)).error).toMatchObject({ name: 'missing_required_field', statusCode: 422 });
  });
});

describe('resend.contactProperties', () => {
  it('declares, lists, gets, updates and removes properties; a fallback of the wrong type is refused', async () => {
    const { resend } = await fresh();
    const plan = await resend.contactProperties.create({ key: 'plan', type: 'string', fallbackValue: 'free' });
    expect(plan.data).toMatchObject({ object: 'contact_property' });
    const seats = await resend.contactProperties.create({ key: 'seats', type: 'number', fallbackValue: 1 });
    const got = await resend.contactProperties.get(plan.data!.id);
    expect(got.data).toMatchObject({ object: 'contact_property', id: plan.data!.id, key: 'plan', type: 'string', fallbackValue: 'free' });
    const listed = await resend.contactProperties.list();
    expect(listed.data!.data.map((p) => [p.key, p.type, p.fallbackValue])).toEqual([['seats', 'number', 1], ['plan', 'string', 'free']]);
    expect((await resend.contactProperties.update({ id: seats.data!.id, fallbackValue: 5 })).data).toMatchObject({ id: seats.data!.id });
    expect((await resend.contactProperties.get(seats.data!.id)).data!.fallbackValue).toBe(5);
    const wrong = await resend.contactProperties.update({ id: seats.data!.id, fallbackValue: 'many' });
    expect(wrong.error).toMatchObject({ name: 'validation_error', statusCode: 422 });
    expect((wrong.error as any).error.code).toBe('fallback_type_mismatch');
    const twice = await resend.contactProperties.create({ key: 'plan', type: 'string' });
    expect((twice.error as any).error.code).toBe('contact_property_exists');
    expect((await resend.contactProperties.remove(seats.data!.id)).data).toEqual({ object: 'contact_property', id: seats.data!.id, deleted: true });
    expect((await resend.contactProperties.get(seats.data!.id)).error).toMatchObject({ name: 'not_found' });
  });
});

describe('resend.contacts', () => {
  it('creates a contact with properties, segments and topics, gets it by id and email, updates, lists and removes it', async () => {
    const { resend, key } = await fresh();
    await resend.contactProperties.create({ key: 'plan', type: 'string', fallbackValue: 'free' });
    await resend.contactProperties.create({ key: 'company', type: 'string', fallbackValue: 'ACME' });
    const segment = (await resend.segments.create({ name: 'Beta' })).data!;
    const topic = (await resend.topics.create({ name: 'News', defaultSubscription: 'opt_out' })).data!;
    const created = await resend.contacts.create({
      email: 'Ada@Example.com', firstName: 'Ada', lastName: 'Lovelace', unsubscribed: false,
      properties: { plan: 'pro', seats: 3 }, segments: [{ id: segment.id }], topics: [{ id: topic.id, subscription: 'opt_in' }],
    });
    expect(created.error).toBeNull();
    const id = created.data!.id;
    const byId = await resend.contacts.get(id);
    expect(byId.data).toEqual({
      object: 'contact', id, email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', unsubscribed: false, created_at: expect.any(String),
      properties: { plan: { type: 'string', value: 'pro' }, seats: { type: 'number', value: 3 }, company: { type: 'string', value: 'ACME' } },
    });
    expect((await resend.contacts.get({ email: 'ada@example.com' })).data!.id).toBe(id);

    // Its segments and topics.
    expect((await resend.contacts.segments.list({ contactId: id })).data!.data.map((s) => s.id)).toEqual([segment.id]);
    const topics = await resend.contacts.topics.list({ email: 'ada@example.com' });
    expect(topics.data!.data).toEqual([{ id: topic.id, name: 'News', description: null, subscription: 'opt_in' }]);

    // Update by email: properties merge (null removes one), unsubscribed is the status.
    expect((await resend.contacts.update({ email: 'ada@example.com', firstName: 'Augusta', unsubscribed: true, properties: { seats: null, team: 'core' } })).data).toEqual({ object: 'contact', id });
    const after = (await call(root.url, 'GET', `/api/v1/contacts/${id}`, { key })).body;
    expect(after).toMatchObject({ first_name: 'Augusta', last_name: 'Lovelace', status: 'unsubscribed', properties: { plan: 'pro', team: 'core' } });
    expect(after.properties).not.toHaveProperty('seats');

    const other = (await resend.contacts.create({ email: 'bob@example.com' })).data!;
    const listed = await resend.contacts.list();
    expect(listed.data!.data.map((c) => c.id)).toEqual([other.id, id]);
    expect(listed.data!.data[1]).toMatchObject({ email: 'ada@example.com', unsubscribed: true });

    expect((await resend.contacts.remove({ email: 'ada@example.com' })).data).toMatchObject({ object: 'contact', contact: id, deleted: true });
    expect((await resend.contacts.get(id)).error).toMatchObject({ name: 'not_found', statusCode: 404 });
    expect((await resend.contacts.remove(other.id)).data).toMatchObject({ contact: other.id, deleted: true });
  });

  it('refuses a foreign segment or topic, a declared property of the wrong type, and a second contact for one address, creating nothing', async () => {
    const { resend } = await fresh();
    const { resend: neighbour } = await fresh();
    const theirSegment = (await neighbour.segments.create({ name: 'Theirs' })).data!;
    const theirTopic = (await neighbour.topics.create({ name: 'Theirs', defaultSubscription: 'opt_in' })).data!;
    const seg = await resend.contacts.create({ email: 'a@example.com', segments: [{ id: theirSegment.id }] });
    expect(seg.error).toMatchObject({ name: 'validation_error', statusCode: 422 });
    expect((seg.error as any).error.code).toBe('segment_not_found');
    const top = await resend.contacts.create({ email: 'a@example.com', topics: [{ id: theirTopic.id, subscription: 'opt_in' }] });
    expect((top.error as any).error.code).toBe('topic_not_found');
    await resend.contactProperties.create({ key: 'seats', type: 'number' });
    const typed = await resend.contacts.create({ email: 'a@example.com', properties: { seats: 'three' } });
    expect((typed.error as any).error.code).toBe('invalid_property_type');
    expect((await resend.contacts.list()).data!.data).toEqual([]);
    expect((await resend.contacts.create({ email: 'a@example.com' })).error).toBeNull();
    expect((await resend.contacts.create({ email: 'A@example.com' })).error).toMatchObject({ statusCode: 409, name: 'validation_error' });
    expect((await resend.contacts.create({ email: 'not an address' })).error).toMatchObject({ statusCode: 400, name: 'validation_error' });
  });
});

describe('resend.segments and contacts.segments', () => {
  it('creates a segment with a name alone, adds and removes contacts, lists its contacts, renames and removes it', async () => {
    const { resend, key } = await fresh();
    const segment = await resend.segments.create({ name: 'VIP' });
    expect(segment.data).toMatchObject({ object: 'segment', name: 'VIP' });
    const id = segment.data!.id;
    expect((await resend.segments.get(id)).data).toMatchObject({ object: 'segment', id, name: 'VIP', created_at: expect.any(String) });
    const ada = (await resend.contacts.create({ email: 'ada@example.com' })).data!;
    await resend.contacts.create({ email: 'bob@example.com' });
    expect((await resend.contacts.list({ segmentId: id })).data!.data).toEqual([]);
    expect((await resend.contacts.segments.add({ email: 'ada@example.com', segmentId: id })).data).toMatchObject({ id });
    const members = await resend.contacts.list({ segmentId: id });
    expect(members.data!.data.map((c) => c.email)).toEqual(['ada@example.com']);
    // /api/v1 sees the same members.
    expect((await call(root.url, 'GET', `/api/v1/segments/${id}/contacts`, { key })).body.data.map((c: any) => c.id)).toEqual([ada.id]);

    expect((await resend.segments.update(id, { name: 'Very important' })).data).toEqual({ object: 'segment', id });
    expect((await resend.segments.list()).data!.data).toEqual([{ object: 'segment', id, name: 'Very important', created_at: expect.any(String) }]);

    expect((await resend.contacts.segments.remove({ contactId: ada.id, segmentId: id })).data).toMatchObject({ id, deleted: true });
    expect((await resend.contacts.list({ segmentId: id })).data!.data).toEqual([]);
    expect((await resend.contacts.segments.remove({ contactId: ada.id, segmentId: id })).error).toMatchObject({ name: 'not_found' });
    expect((await resend.segments.remove(id)).data).toEqual({ object: 'segment', id, deleted: true });
    expect((await resend.segments.get(id)).error).toMatchObject({ name: 'not_found' });
  });

  it('a filter segment of /api/v1 holds its members and whom its filter matches', async () => {
    const { resend, key } = await fresh();
    const pro = (await resend.contacts.create({ email: 'pro@example.com', properties: { plan: 'pro' } })).data!;
    const friend = (await resend.contacts.create({ email: 'friend@example.com', properties: { plan: 'free' } })).data!;
    await resend.contacts.create({ email: 'nobody@example.com', properties: { plan: 'free' } });
    const filtered = await call(root.url, 'POST', '/api/v1/segments', { key, body: { name: 'Pro', filter: { field: 'properties.plan', op: 'eq', value: 'pro' } } });
    await resend.contacts.segments.add({ contactId: friend.id, segmentId: filtered.body.id });
    const contacts = await resend.contacts.list({ segmentId: filtered.body.id });
    expect(contacts.data!.data.map((c) => c.id).sort()).toEqual([pro.id, friend.id].sort());
    // Only the added contact lists the segment among its own.
    expect((await resend.contacts.segments.list({ contactId: friend.id })).data!.data.map((s) => s.id)).toEqual([filtered.body.id]);
    expect((await resend.contacts.segments.list({ contactId: pro.id })).data!.data).toEqual([]);
  });
});

describe('contacts.topics', () => {
  it('opts a contact in and out of topics; a foreign topic changes nothing', async () => {
    const { resend } = await fresh();
    const news = (await resend.topics.create({ name: 'News', defaultSubscription: 'opt_in' })).data!;
    const offers = (await resend.topics.create({ name: 'Offers', defaultSubscription: 'opt_out' })).data!;
    const contact = (await resend.contacts.create({ email: 'c@example.com' })).data!;
    const before = await resend.contacts.topics.list({ id: contact.id });
    expect(before.data!.data.map((t) => [t.name, t.subscription])).toEqual([['Offers', 'opt_out'], ['News', 'opt_in']]);
    expect((await resend.contacts.topics.update({ id: contact.id, topics: [{ id: news.id, subscription: 'opt_out' }, { id: offers.id, subscription: 'opt_in' }] })).data).toEqual({ id: contact.id });
    const after = await resend.contacts.topics.list({ email: 'c@example.com' });
    expect(after.data!.data.map((t) => [t.name, t.subscription])).toEqual([['Offers', 'opt_in'], ['News', 'opt_out']]);

    const { resend: neighbour } = await fresh();
    const theirs = (await neighbour.topics.create({ name: 'Theirs', defaultSubscription: 'opt_in' })).data!;
    const refused = await resend.contacts.topics.update({ id: contact.id, topics: [{ id: news.id, subscription: 'opt_in' }, { id: theirs.id, subscription: 'opt_out' }] });
    expect((refused.error as any).error.code).toBe('topic_not_found');
    expect((await resend.contacts.topics.list({ id: contact.id })).data!.data.map((t) => t.subscription)).toEqual(['opt_in', 'opt_out']);
  });
});

describe('writes racing a delete', () => {
  it('contacts.create losing a race with its segment\'s or topic\'s delete is 422, and nothing is made', async () => {
    const { resend } = await fresh();
    const segment = (await resend.segments.create({ name: 'Going' })).data!;
    const topic = (await resend.topics.create({ name: 'Going too', defaultSubscription: 'opt_in' })).data!;
    const races: [string, string, object, string][] = [
      ['mail_segments', segment.id, { email: 'race-seg@example.com', segments: [{ id: segment.id }] }, 'segment_not_found'],
      ['mail_topics', topic.id, { email: 'race-topic@example.com', topics: [{ id: topic.id, subscription: 'opt_in' }] }, 'topic_not_found'],
    ];
    for (const [table, id, body, code] of races) {
      // The delete holds the row while the create checks it (still there) and then writes its membership.
      const held = await holdWrite(root.ingress.platform.pg, `DELETE FROM ${table} WHERE id = $1`, [id]);
      const creating = resend.contacts.create(body as any);
      await held.untilBlocking();
      await held.commit();
      const made = await creating;
      expect(made.error, table).toMatchObject({ statusCode: 422, name: 'validation_error' });
      expect((made.error as any).error.code).toBe(code);
    }
    expect((await resend.contacts.list()).data!.data).toEqual([]);
  });

  it('contacts.topics.update is all or nothing: a topic deleted while it writes leaves every choice as it was', async () => {
    const { resend } = await fresh();
    const news = (await resend.topics.create({ name: 'News', defaultSubscription: 'opt_in' })).data!;
    const going = (await resend.topics.create({ name: 'Going', defaultSubscription: 'opt_out' })).data!;
    const contact = (await resend.contacts.create({ email: 'd@example.com' })).data!;
    const held = await holdWrite(root.ingress.platform.pg, 'DELETE FROM mail_topics WHERE id = $1', [going.id]);
    const updating = resend.contacts.topics.update({ id: contact.id, topics: [{ id: news.id, subscription: 'opt_out' }, { id: going.id, subscription: 'opt_in' }] });
    await held.untilBlocking();
    await held.commit();
    const refused = await updating;
    expect(refused.error).toMatchObject({ statusCode: 422 });
    expect((refused.error as any).error.code).toBe('topic_not_found');
    expect((await resend.contacts.topics.list({ id: contact.id })).data!.data.map((t) => [t.name, t.subscription])).toEqual([['News', 'opt_in']]);
  });
});

describe('two organizations side by side', () => {
  it('never see or touch each other\'s contacts, segments, topics and properties', async () => {
    const mine = await fresh();
    const theirs = await fresh();
    const contact = (await mine.resend.contacts.create({ email: 'shared@example.com' })).data!;
    const segment = (await mine.resend.segments.create({ name: 'Mine' })).data!;
    const topic = (await mine.resend.topics.create({ name: 'Mine', defaultSubscription: 'opt_in' })).data!;
    const property = (await mine.resend.contactProperties.create({ key: 'plan', type: 'string' })).data!;
    const r = theirs.resend;
    for (const res of [
      await r.contacts.get(contact.id), await r.contacts.get({ email: 'shared@example.com' }), await r.contacts.update({ id: contact.id, firstName: 'X' }),
      await r.contacts.remove(contact.id), await r.contacts.segments.list({ contactId: contact.id }), await r.contacts.topics.list({ id: contact.id }),
      await r.contacts.topics.update({ id: contact.id, topics: [{ id: topic.id, subscription: 'opt_out' }] }),
      await r.segments.get(segment.id), await r.segments.update(segment.id, { name: 'X' }), await r.segments.remove(segment.id), await r.contacts.list({ segmentId: segment.id }),
      await r.topics.get(topic.id), await r.topics.update({ id: topic.id, name: 'X' }), await r.topics.remove(topic.id),
      await r.contactProperties.get(property.id), await r.contactProperties.update({ id: property.id, fallbackValue: 'x' }), await r.contactProperties.remove(property.id),
    ]) expect(res.error).toMatchObject({ name: 'not_found', statusCode: 404 });
    // Their own contact with the same address is theirs alone; adding it to my segment is refused.
    const theirContact = (await r.contacts.create({ email: 'shared@example.com' })).data!;
    expect((await r.contacts.segments.add({ contactId: theirContact.id, segmentId: segment.id })).error).toMatchObject({ name: 'not_found' });
    expect((await r.contacts.list()).data!.data.map((c) => c.id)).toEqual([theirContact.id]);
    expect((await r.segments.list()).data!.data).toEqual([]);
    expect((await r.topics.list()).data!.data).toEqual([]);
    expect((await r.contactProperties.list()).data!.data).toEqual([]);
    // Mine are untouched.
    expect((await mine.resend.contacts.get(contact.id)).data).toMatchObject({ email: 'shared@example.com', first_name: null });
    expect((await mine.resend.segments.get(segment.id)).data!.name).toBe('Mine');
    expect((await mine.resend.topics.get(topic.id)).data!.name).toBe('Mine');
  });
});
