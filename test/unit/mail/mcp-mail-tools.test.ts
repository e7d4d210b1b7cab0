// The mail MCP tools take their argument rules from the REST TypeBox schemas,
// and each kind of key is given only tools whose REST access it has: what a
// kind lists, and how a call of another tool is refused (REST's 403 in the
// mail API's error body), without reaching a store.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { inlineRefs } from '../../../src/platform/http/components.ts';
import { toolCatalog } from '../../../src/platform/mcp/tool-catalog.ts';
import { callTool } from '../../../src/platform/mcp/tool-call.ts';
import { KEY_KINDS, type KeyKind } from '../../../src/mail/accounts/mail-keys.ts';
import { mailErrorBody } from '../../../src/mail/http/mail-errors.ts';
import { mailMcpTools } from '../../../src/mail/mcp/mail-mcp.ts';
import { kindsOf, mailTool, mailToolRefusal, type MailToolContext } from '../../../src/mail/mcp/mail-tool.ts';
import { CreateBody } from '../../../src/mail/broadcasts/broadcast-schemas.ts';
import { CreateContactBody, UpdateContactBody } from '../../../src/mail/audience/contact-schemas.ts';
import { EmailFields } from '../../../src/mail/emails/email-schemas.ts';
import { AddSuppressionBody } from '../../../src/mail/suppressions/suppression-schemas.ts';
import { Type } from '@sinclair/typebox';

// Listed and called with refused keys or bad arguments only, so their stores are never reached.
const tools = mailMcpTools({} as never);
const catalog = toolCatalog(tools, { refusal: mailToolRefusal, errorBody: mailErrorBody });
const json = (schema: unknown): any => inlineRefs(JSON.parse(JSON.stringify(schema)));
const input = (name: string): any => catalog.listing.find((t) => t.name === name)!.inputSchema;
const ctx = (kind: KeyKind): MailToolContext => ({
  tenantId: 'org',
  grant: { keyId: 'key', organizationId: 'org', kind, domains: null, rateLimit: null },
  requestId: 'req-1',
  log: pino({ level: 'silent' }),
});

describe('mail MCP tools', () => {
  it('lists by kind: a full key every tool, a send key the email tools, a test key the report', () => {
    const names = (kind: KeyKind) => catalog.listFor(ctx(kind)).map((t) => t.name);
    expect(names('full')).toEqual(tools.map((t) => t.name));
    expect(names('send')).toEqual(['send_email', 'get_email', 'list_emails', 'cancel_email']);
    expect(names('test')).toEqual(['get_broadcast_report']);
  });

  it('refuses to define a tool for a kind whose REST access lacks its work; each tool is refused exactly the kinds it does not name', () => {
    expect(() => mailTool({ access: 'manage', kinds: ['send'] }, { ...tools[4]!, name: 'x' } as never)).toThrow(/a send key has no manage access in REST/);
    for (const tool of tools) {
      for (const kind of KEY_KINDS) expect(mailToolRefusal(tool, ctx(kind)) === undefined, `${tool.name} for ${kind}`).toBe(kindsOf(tool).includes(kind));
    }
  });

  it('answers a call of a tool the kind may not use with REST\'s 403 in the mail API\'s error body, before its arguments', async () => {
    for (const [kind, name] of [['send', 'add_contact'], ['send', 'create_broadcast'], ['test', 'send_email']] as const) {
      const res = await callTool(catalog.get(name)!, { not: 'checked' }, ctx(kind), catalog);
      expect(res.isError).toBe(true);
      expect(JSON.parse((res.content[0] as { text: string }).text)).toMatchObject({
        statusCode: 403, name: 'insufficient_permissions', message: expect.stringContaining(`A ${kind} key cannot`),
        error: { code: 'insufficient_permissions', requestId: 'req-1' },
      });
    }
  });

  it('takes its arguments from the REST schemas', async () => {
    expect(input('create_broadcast')).toEqual(json(CreateBody));
    expect(input('add_contact')).toEqual(json(CreateContactBody));
    expect(input('add_suppression')).toEqual(json(AddSuppressionBody));
    const send = input('send_email');
    const fields = json(Type.Object(EmailFields)).properties;
    for (const field of ['from', 'to', 'cc', 'bcc', 'reply_to', 'subject', 'html', 'text', 'scheduled_at']) expect(send.properties[field], field).toEqual(fields[field]);
    expect(send.required).toEqual(['from', 'to', 'subject']);
    const update = input('update_contact');
    const body = json(UpdateContactBody).properties;
    for (const field of ['first_name', 'last_name']) expect(update.properties[field], field).toEqual(body[field]);
    // The REST body's fields, and Resend's `unsubscribed` beside `status`.
    expect(Object.keys(update.properties).sort()).toEqual(['contact', 'unsubscribed', ...Object.keys(body)].sort());
    // A bad argument is the REST body validator's answer, in the mail body.
    const res = await callTool(catalog.get('add_contact')!, { email: 'a@example.net', status: 'gone' }, ctx('full'), catalog);
    expect(JSON.parse((res.content[0] as { text: string }).text)).toMatchObject({ statusCode: 400, name: 'validation_failed', error: { details: [{ path: '/status' }] } });
  });
});
