// One contact's broadcast message (src/mail/broadcasts/broadcast-content.ts): Resend's {{{VARIABLES}}}
// are filled only in broadcasts made at the root paths; an /api/v1 broadcast renders as the spec says.
import { describe, expect, it } from 'vitest';
import { renderBroadcastMessage } from '../../../src/mail/broadcasts/broadcast-content.ts';
import type { BroadcastRow } from '../../../src/mail/broadcasts/broadcasts.ts';

const contact = { email: 'ada@example.net', first_name: 'Ada', last_name: null, properties: { plan: 'pro' } };
const broadcast = (resend_face: boolean) => ({
  resend_face, html: '<p>{{{FIRST_NAME}}} {{contact.plan | "free"}} [{{{constructor|none}}}] [{{{toString}}}] {{{plan}}}</p>', text_body: 'Hi {{{FIRST_NAME|you}}}', preview_text: null,
}) as unknown as BroadcastRow;

describe('renderBroadcastMessage', () => {
  it('leaves {{{X}}} as written in an /api/v1 broadcast, filling only {{contact.x}}', () => {
    const m = renderBroadcastMessage(broadcast(false), 'Hello {{{FIRST_NAME}}}', contact);
    expect(m).toEqual({ subject: 'Hello {{{FIRST_NAME}}}', html: '<p>{{{FIRST_NAME}}} pro [{{{constructor|none}}}] [{{{toString}}}] {{{plan}}}</p>', text: 'Hi {{{FIRST_NAME|you}}}' });
  });

  it('fills Resend\'s variables in a root broadcast, never from Object.prototype', () => {
    const m = renderBroadcastMessage(broadcast(true), 'Hello {{{FIRST_NAME}}}', contact);
    expect(m).toEqual({ subject: 'Hello Ada', html: '<p>Ada pro [none] [] pro</p>', text: 'Hi Ada' });
  });
});
