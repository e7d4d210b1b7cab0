// Resend's SDK (unmodified, RESEND_BASE_URL at the test ingress) on the suppression
// list at the root paths: one by one and in batches; what it lists is what the
// sender leaves out; one organization never sees or touches another's.
import { Resend } from 'resend';
import { describe, expect, it } from 'vitest';
import { call } from '../../support/ingress.ts';
import { useResendIngress } from '../../support/mail/resend-ingress.ts';
import { organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';

const root = useResendIngress();

describe('resend.suppressions', () => {
  it('adds, gets by id and email, lists by origin, and removes an entry; a send to it is suppressed', async () => {
    const { key } = await organizationWithKey(root.url);
    const resend = new Resend(key);
    const added = await resend.suppressions.add({ email: 'Gone@Example.com' });
    expect(added.data).toMatchObject({ object: 'suppression', id: expect.any(String) });
    const id = added.data!.id;
    expect((await resend.suppressions.add({ email: 'gone@example.com' })).data!.id).toBe(id);
    expect((await resend.suppressions.get(id)).data).toEqual({ object: 'suppression', id, email: 'gone@example.com', origin: 'manual', source_id: null, created_at: expect.any(String) });
    expect((await resend.suppressions.get('gone@example.com')).data!.id).toBe(id);
    await call(root.url, 'POST', '/api/v1/suppressions', { key, body: { email: 'bounced@example.com', reason: 'bounce' } });
    expect((await resend.suppressions.list()).data!.data.map((s) => s.email)).toEqual(['bounced@example.com', 'gone@example.com']);
    expect((await resend.suppressions.list({ origin: 'bounce' })).data!.data.map((s) => s.email)).toEqual(['bounced@example.com']);
    expect((await resend.suppressions.list({ limit: 1 })).data).toMatchObject({ object: 'list', has_more: true });

    const domain = (await verifiedDomain(root.url, key)).name;
    const sent = await resend.emails.send({ from: `a@${domain}`, to: 'gone@example.com', subject: 'S', text: 'x' });
    expect((await resend.emails.get(sent.data!.id)).data!.last_event).toBe('suppressed');

    expect((await resend.suppressions.remove('gone@example.com')).data).toEqual({ object: 'suppression', id, deleted: true });
    expect((await resend.suppressions.get(id)).error).toMatchObject({ name: 'not_found', statusCode: 404 });
    expect((await resend.suppressions.remove(id)).error).toMatchObject({ name: 'not_found' });
    expect((await resend.suppressions.add({ email: 'not an address' })).error).toMatchObject({ name: 'validation_error', statusCode: 400 });
  });

  it('adds and removes in batches, checking every address first', async () => {
    const { key } = await organizationWithKey(root.url);
    const resend = new Resend(key);
    const bad = await resend.suppressions.batch.add({ emails: ['a@example.com', 'nope'] });
    expect(bad.error).toMatchObject({ name: 'validation_error', statusCode: 400 });
    expect((bad.error as any).error.details[0].path).toBe('/emails/1');
    expect((await resend.suppressions.list()).data!.data).toEqual([]);
    const added = await resend.suppressions.batch.add({ emails: ['a@example.com', 'b@example.com', 'c@example.com'] });
    expect(added.data!.data).toHaveLength(3);
    expect((await resend.suppressions.list()).data!.data.map((s) => s.email).sort()).toEqual(['a@example.com', 'b@example.com', 'c@example.com']);
    const byEmail = await resend.suppressions.batch.remove({ emails: ['a@example.com', 'never@example.com'] });
    expect(byEmail.data!.data).toEqual([{ object: 'suppression', id: added.data!.data[0]!.id, deleted: true }]);
    const byId = await resend.suppressions.batch.remove({ ids: [added.data!.data[1]!.id, added.data!.data[2]!.id] });
    expect(byId.data!.data.map((d) => d.id)).toEqual([added.data!.data[1]!.id, added.data!.data[2]!.id]);
    expect((await resend.suppressions.list()).data!.data).toEqual([]);
  });

  it('keeps each organization to its own list', async () => {
    const mine = new Resend((await organizationWithKey(root.url)).key);
    const theirs = new Resend((await organizationWithKey(root.url)).key);
    const entry = (await mine.suppressions.add({ email: 'x@example.com' })).data!;
    expect((await theirs.suppressions.get(entry.id)).error).toMatchObject({ name: 'not_found' });
    expect((await theirs.suppressions.get('x@example.com')).error).toMatchObject({ name: 'not_found' });
    expect((await theirs.suppressions.remove(entry.id)).error).toMatchObject({ name: 'not_found' });
    expect((await theirs.suppressions.batch.remove({ ids: [entry.id] })).data!.data).toEqual([]);
    expect((await theirs.suppressions.list()).data!.data).toEqual([]);
    expect((await mine.suppressions.get(entry.id)).data!.email).toBe('x@example.com');
  });
});
