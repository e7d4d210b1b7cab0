// POST /events (SEND and FULL keys: access `events`), and POST /events/send with the
// same body, the path the Resend SDK's `events.send` posts to. The body names the
// event and its contact (`email` or `contact_id`), with optional `properties`
// (`payload` in the SDK's shape): a trigger event. What it does, and its quotas: trigger-events.ts.
import { addComponents, ref } from '../../platform/http/components.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import type { App } from '../../platform/http/server.ts';
import { isUuid } from '../../platform/http/validation.ts';
import { contactEmail, MAX_PROPERTIES_BYTES } from '../audience/contact-fields.ts';
import { RESEND_BODY_ERRORS, resendErrorResponses } from '../resend/resend-errors.ts';
import { Accepted, EventBody } from './trigger-event-schemas.ts';
import { NEW_CONTACTS_PER_DAY, RUNS_PER_DAY, type TriggerEventRefusal, type TriggerEvents } from './trigger-events.ts';

const noSuchContact = () => new ApiError(404, 'contact_not_found', 'contact_id is not a contact of this organization.', [{ path: '/contact_id', message: 'no such contact' }]);

/** A refused event's answer: 404 for an unknown contact_id, 429 for a quota of the day spent. */
function triggerEventRefusalError(r: TriggerEventRefusal): ApiError {
  switch (r.reason) {
    case 'contact_not_found': return noSuchContact();
    case 'contact_quota_exceeded':
      return new ApiError(429, r.reason, `The organization has created its ${NEW_CONTACTS_PER_DAY} new contacts through events of this UTC day; nothing of this event was applied. The quota renews at ${r.resets}.`);
    case 'run_quota_exceeded':
      return new ApiError(429, r.reason, `The organization has started its ${RUNS_PER_DAY} automation runs through events of this UTC day; nothing of this event was applied. The quota renews at ${r.resets}.`);
  }
}

export async function triggerEventRoutes(app: App, deps: { triggerEvents: TriggerEvents }): Promise<void> {
  addComponents(app, [EventBody, Accepted]);
  const options = (operationId: string, summary: string) => ({
    config: { mailAccess: 'events' as const },
    schema: {
      tags: ['events'], operationId, summary,
      description: `Starts a run of each enabled automation triggered by the event, creating the contact of an unknown address. Per organization and UTC day, events may create ${NEW_CONTACTS_PER_DAY} contacts ` +
        `(429 contact_quota_exceeded) and start ${RUNS_PER_DAY} runs (429 run_quota_exceeded); an event over either is refused whole. Events that match no automation, and existing contacts, take no quota.`,
      body: ref(EventBody),
      response: { 200: withRateLimitHeaders(Accepted, 'The event was accepted.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 404) },
    },
  });

  const handler = async (request: { body: typeof EventBody.static; mailAuth: { organizationId: string; domains: string[] | null } }) => {
    const body = request.body;
    if ((body.email === undefined) === (body.contact_id === undefined)) {
      throw new ApiError(400, 'invalid_contact', 'Name the contact with exactly one of email and contact_id.', [{ path: '/email', message: 'email or contact_id' }]);
    }
    if (body.properties !== undefined && body.payload !== undefined) throw new ApiError(400, 'invalid_properties', 'Send properties or payload, not both.', [{ path: '/payload', message: 'properties or payload' }]);
    const email = body.email === undefined ? null : contactEmail(body.email);
    if (email === undefined) throw new ApiError(400, 'invalid_email', 'email is not an email address.', [{ path: '/email', message: 'not an address' }]);
    const contactId = body.contact_id ?? null;
    if (contactId !== null && !isUuid(contactId)) throw noSuchContact();
    const properties = body.properties ?? body.payload ?? {};
    if (Buffer.byteLength(JSON.stringify(properties)) > MAX_PROPERTIES_BYTES) throw new ApiError(400, 'properties_too_large', 'properties hold at most 16 KB as JSON.', [{ path: '/properties', message: 'too large' }]);
    const result = await deps.triggerEvents.accept({ organizationId: request.mailAuth.organizationId, name: body.event, email, contactId, properties, scope: request.mailAuth.domains });
    if (!result.ok) throw triggerEventRefusalError(result.refusal);
    const accepted = result.event;
    return { object: 'event' as const, event: body.event, id: accepted.id, contact_id: accepted.contact_id, contact_created: accepted.contact_created, runs_started: accepted.run_ids };
  };

  app.post('/events', options('sendEvent', 'Post an event'), handler);
  app.post('/events/send', options('sendEventResendPath', 'Post an event (the Resend SDK\'s path)'), handler);
}
