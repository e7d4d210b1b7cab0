// Resend's /broadcasts at the root, over the same broadcasts, transitions and
// worker as /api/v1/broadcasts (broadcast-operations.ts): create (and send at
// once with `send`), update and remove a draft, duplicate, send, cancel, get,
// list. A broadcast goes to a segment's contacts that are subscribed and not
// suppressed; with a topic, also subscribed to it (the spec's rule). Times may be
// English as Resend takes them ("in 1 hour"). Content takes Resend's
// {{{FIRST_NAME}}}, {{{LAST_NAME}}}, {{{EMAIL}}}, {{{<property>}}} and
// {{{RESEND_UNSUBSCRIBE_URL}}} (broadcast-content.ts).
import { Type } from '@sinclair/typebox';
import { addComponents, ref } from '../../platform/http/components.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { withRateLimitHeaders } from '../../platform/http/openapi.ts';
import { Name, StringEnum } from '../../platform/http/schema-types.ts';
import type { App } from '../../platform/http/server.ts';
import type { MailKeyGrant } from '../accounts/mail-keys.ts';
import type { SubscriptionTopics } from '../audience/subscription-topics.ts';
import { fromDomainRefusal } from '../auth/permissions.ts';
import { sendTimeOrRefused } from '../emails/prepare-message.ts';
import { checkPartSizes } from '../http/content-size.ts';
import { parseMailbox } from '../http/email-address.ts';
import { IdParams, NullableTimestamp, Timestamp } from '../http/mail-schemas.ts';
import { RESEND_BODY_ERRORS, RESEND_ERRORS, resendErrorResponses } from '../resend/resend-errors.ts';
import { resendPage, ResendListOf, ResendPageQuery } from '../resend/resend-pages.ts';
import { checkSegment, createBroadcast, sendBroadcast, cancelBroadcast, type BroadcastOperationDeps } from './broadcast-operations.ts';
import { broadcastId, found, refused } from './broadcast-refusals.ts';
import { clickedLinks } from './broadcast-clicked-links.ts';
import { broadcastRecipients, RECIPIENT_EVENT_TYPES } from './broadcast-recipients.ts';
import { OneLine } from './broadcast-schemas.ts';
import type { BroadcastRow } from './broadcasts.ts';
import { RESEND_BROADCAST_STATUSES, toResendBroadcast, toResendBroadcastItem } from './resend-broadcast-shape.ts';

/** Bodies that may hold html and text of 2 MB each, escaped as JSON. */
const BODY_LIMIT = 12 * 1024 * 1024;
const When = Type.String({ minLength: 1, maxLength: 100, description: 'ISO 8601 with an offset, or English as Resend takes it ("in 1 hour", "tomorrow at 9am"; UTC).' });
const ReplyTo = Type.Union([Type.String({ maxLength: 320 }), Type.Array(Type.String({ maxLength: 320 }), { maxItems: 1 })], { description: 'One address (a list of one is taken too).' });
const contentFields = {
  segment_id: Type.Optional(Type.String({ maxLength: 100 })),
  audience_id: Type.Optional(Type.String({ maxLength: 100, description: 'Resend\'s old name of segment_id.' })),
  topic_id: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: 'The topic\'s id or slug; without one the topic rule does not apply.' })),
  from: Type.String({ minLength: 3, maxLength: 320 }),
  subject: OneLine(998, 'The subject.'),
  reply_to: Type.Optional(ReplyTo),
  html: Type.Optional(Type.String({ description: 'At most 2 MB.' })),
  text: Type.Optional(Type.String({ description: 'At most 2 MB.' })),
  preview_text: Type.Optional(OneLine(256, 'A hidden block at the top of the HTML part.')),
};
const CreateBody = Type.Object(
  { name: Type.Optional(Name(120)), ...contentFields, send: Type.Optional(Type.Boolean({ description: 'true: send at once (or at scheduled_at).' })), scheduled_at: Type.Optional(When) },
  { additionalProperties: false },
);
const UpdateBody = Type.Partial(Type.Object({ name: Name(120), ...contentFields }), { additionalProperties: false });

const itemFields = {
  object: Type.Literal('broadcast'), id: Type.String(), name: Type.String(),
  segment_id: Type.Union([Type.String(), Type.Null()]), audience_id: Type.Union([Type.String(), Type.Null()]),
  status: StringEnum(RESEND_BROADCAST_STATUSES, { description: 'queued: sending, or in its A/B test.' }),
  created_at: Timestamp(), scheduled_at: NullableTimestamp(), sent_at: NullableTimestamp(),
};
const ResendBroadcastItem = Type.Object(itemFields, { $id: 'ResendBroadcastItem', title: 'ResendBroadcastItem' });
const ResendBroadcast = Type.Object(
  {
    ...itemFields, from: Type.String(), subject: Type.String(), reply_to: Type.Union([Type.Array(Type.String()), Type.Null()]), preview_text: Type.Union([Type.String(), Type.Null()]),
    topic_id: Type.Union([Type.String(), Type.Null()]), html: Type.Union([Type.String(), Type.Null()]), text: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'ResendBroadcast', title: 'ResendBroadcast' },
);
const ResendBroadcastList = ResendListOf(ref(ResendBroadcastItem), 'ResendBroadcastList');
const ResendBroadcastRef = Type.Object({ object: Type.Literal('broadcast'), id: Type.String() }, { $id: 'ResendBroadcastRef', title: 'ResendBroadcastRef' });
const ResendClickedLinkList = ResendListOf(Type.Object({
  id: Type.String({ description: 'An opaque name of the URL, for paging.' }), url: Type.String(), clicks: Type.Integer({ description: 'Clicks by people (not flagged automated).' }), unique_clicks: Type.Integer({ description: 'Messages with such a click.' }),
}), 'ResendClickedLinkList');
const ResendBroadcastRecipientList = ResendListOf(Type.Object({
  id: Type.String({ description: 'The message.' }), contact_id: Type.Union([Type.String(), Type.Null()]), email: Type.String(),
  count: Type.Optional(Type.Integer({ description: 'Opens or clicks by people.' })),
  clicked_links: Type.Optional(Type.Array(Type.Object({ url: Type.String(), clicks: Type.Integer() }))),
  bounce_type: Type.Optional(Type.Literal('permanent')),
}), 'ResendBroadcastRecipientList');
const ResendBroadcastRemoved = Type.Object({ object: Type.Literal('broadcast'), id: Type.String(), deleted: Type.Literal(true) }, { $id: 'ResendBroadcastRemoved', title: 'ResendBroadcastRemoved' });

export interface ResendBroadcastDeps extends BroadcastOperationDeps {
  subscriptionTopics: SubscriptionTopics;
}

/** One address of reply_to (a list of one is taken). */
const replyToOf = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

export async function resendBroadcastRoutes(app: App, deps: ResendBroadcastDeps): Promise<void> {
  const { broadcasts, domains, subscriptionTopics, pg } = deps;
  const tags = ['resend-broadcasts'];
  const config = { mailAccess: 'broadcasts' as const };
  addComponents(app, [ResendBroadcastItem, ResendBroadcast, ResendBroadcastList, ResendBroadcastRef, ResendBroadcastRemoved, ResendClickedLinkList, ResendBroadcastRecipientList]);

  /** The slug of the organization's topic named by id or slug; undefined for none given, null for none (null). */
  const topicSlugOf = async (organizationId: string, topicId: string | null | undefined): Promise<string | null | undefined> => {
    if (topicId === undefined || topicId === null) return topicId;
    const topic = await subscriptionTopics.find(organizationId, topicId);
    if (!topic) throw new ApiError(422, 'topic_not_found', `topic_id ${topicId.slice(0, 64)} is not a topic of this organization.`, [{ path: '/topic_id', message: 'no such topic' }]);
    return topic.slug;
  };
  const topicIdOf = async (b: BroadcastRow): Promise<string | null> => {
    if (b.topic === null) return null;
    return (await subscriptionTopics.find(b.organization_id, b.topic))?.id ?? null;
  };
  const visible = async (grant: MailKeyGrant, id: string) => found(await broadcasts.get(grant.organizationId, broadcastId(id), grant.domains));

  app.post('/broadcasts', {
    config,
    bodyLimit: BODY_LIMIT,
    schema: {
      tags, operationId: 'resendCreateBroadcast', summary: 'Create a broadcast to a segment (Resend\'s broadcasts.create)',
      description: 'A draft; with send: true it is sent at once, or scheduled for scheduled_at. segment_id (or audience_id) is required.',
      body: CreateBody,
      response: { 201: withRateLimitHeaders(ResendBroadcastRef, 'The new broadcast.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 404, 409) },
    },
  }, async (request, reply) => {
    const grant = request.mailAuth;
    const { segment_id, audience_id, topic_id, reply_to, send, scheduled_at, name, ...content } = request.body;
    const segmentId = segment_id ?? audience_id;
    if (segmentId === undefined) throw new ApiError(422, 'missing_required_field', 'segment_id is required: the segment the broadcast goes to.', [{ path: '/segment_id', message: 'required' }]);
    const at = scheduled_at === undefined ? undefined : sendTimeOrRefused(scheduled_at, '/scheduled_at');
    const topic = (await topicSlugOf(grant.organizationId, topic_id)) ?? null;
    const replyTo = replyToOf(reply_to);
    const made = await createBroadcast(deps, grant, {
      ...content,
      name: name ?? content.subject.slice(0, 120),
      topic,
      segment_id: segmentId,
      resend_face: true,
      ...(replyTo !== undefined ? { reply_to: replyTo } : {}),
      // Made scheduled, or sending, in the one transaction that writes it: never left a draft.
      ...(at ? { scheduled_at: at.toISOString() } : {}),
      send_now: send === true && !at,
    });
    return reply.status(201).send({ object: 'broadcast' as const, id: made.id });
  });

  app.get('/broadcasts', {
    config,
    schema: { tags, operationId: 'resendListBroadcasts', summary: 'List broadcasts', querystring: ResendPageQuery, response: { 200: withRateLimitHeaders(ResendBroadcastList, 'Newest first.'), ...resendErrorResponses(...RESEND_ERRORS, 400) } },
  }, async (request) => resendPage(pg, {
    select: 'SELECT * FROM mail_broadcasts WHERE organization_id = $1 AND ($2::text[] IS NULL OR from_domain = ANY($2))',
    params: [request.mailAuth.organizationId, request.mailAuth.domains],
  }, request.query, toResendBroadcastItem));

  app.get('/broadcasts/:id', {
    config,
    schema: { tags, operationId: 'resendGetBroadcast', summary: 'Get a broadcast', params: IdParams, response: { 200: withRateLimitHeaders(ResendBroadcast, 'The broadcast.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request) => {
    const b = await visible(request.mailAuth, request.params.id);
    return toResendBroadcast(b, await topicIdOf(b));
  });

  app.patch('/broadcasts/:id', {
    config,
    bodyLimit: BODY_LIMIT,
    schema: {
      tags, operationId: 'resendUpdateBroadcast', summary: 'Change a draft broadcast', description: '409 not_editable once it left draft.', params: IdParams,
      body: UpdateBody,
      response: { 200: withRateLimitHeaders(ResendBroadcastRef, 'Updated.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 404, 409) },
    },
  }, async (request) => {
    const grant = request.mailAuth;
    const b = await visible(grant, request.params.id);
    const { segment_id, audience_id, topic_id, reply_to, from, ...rest } = request.body;
    checkPartSizes(rest);
    const segmentId = segment_id ?? audience_id;
    if (segmentId !== undefined) await checkSegment(pg, grant.organizationId, segmentId);
    const topic = await topicSlugOf(grant.organizationId, topic_id);
    let sender: { from_address: string; from_domain: string } | undefined;
    if (from !== undefined) {
      const mailbox = parseMailbox(from);
      if (!mailbox) throw new ApiError(400, 'invalid_from', 'from must be `email` or `Name <email>`.', [{ path: '/from', message: 'not an address' }]);
      const refusal = fromDomainRefusal(grant, mailbox.domain, await domains.verifiedNames(grant.organizationId));
      if (refusal) throw refusal;
      sender = { from_address: from.trim(), from_domain: mailbox.domain };
    }
    const replyTo = replyToOf(reply_to);
    if (replyTo !== undefined && !parseMailbox(replyTo)) throw new ApiError(400, 'invalid_reply_to', 'reply_to must be `email` or `Name <email>`.', [{ path: '/reply_to', message: 'not an address' }]);
    const edited = await broadcasts.edit(grant.organizationId, b.id, grant.domains, {
      ...rest,
      ...sender,
      ...(segmentId !== undefined ? { segment_id: segmentId } : {}),
      ...(topic !== undefined ? { topic } : {}),
      ...(replyTo !== undefined ? { reply_to: replyTo } : {}),
    });
    if (!edited.ok) throw refused(edited);
    return { object: 'broadcast' as const, id: b.id };
  });

  app.delete('/broadcasts/:id', {
    config,
    schema: { tags, operationId: 'resendRemoveBroadcast', summary: 'Remove a draft broadcast', description: '409 not_editable once it left draft (cancel it instead).', params: IdParams, response: { 200: withRateLimitHeaders(ResendBroadcastRemoved, 'Removed.'), ...resendErrorResponses(...RESEND_ERRORS, 404, 409) } },
  }, async (request) => {
    const removed = await broadcasts.remove(request.mailAuth.organizationId, broadcastId(request.params.id), request.mailAuth.domains);
    if (!removed.ok) throw refused(removed);
    return { object: 'broadcast' as const, id: removed.broadcast.id, deleted: true as const };
  });

  app.post('/broadcasts/:id/duplicate', {
    config,
    schema: { tags, operationId: 'resendDuplicateBroadcast', summary: 'Copy a broadcast into a new draft', params: IdParams, response: { 201: withRateLimitHeaders(ResendBroadcastRef, 'The copy, a draft.'), ...resendErrorResponses(...RESEND_ERRORS, 404) } },
  }, async (request, reply) => {
    const copy = await broadcasts.duplicate(request.mailAuth.organizationId, broadcastId(request.params.id), request.mailAuth.domains);
    if (!copy.ok) throw refused(copy);
    return reply.status(201).send({ object: 'broadcast' as const, id: copy.broadcast.id });
  });

  app.post('/broadcasts/:id/send', {
    config,
    preValidation: async (request: { body: unknown }) => {
      request.body ??= {};
    },
    schema: {
      tags, operationId: 'resendSendBroadcast', summary: 'Send a draft or scheduled broadcast now, or schedule it',
      params: IdParams,
      body: Type.Object({ scheduled_at: Type.Optional(When) }, { additionalProperties: false }),
      response: { 200: withRateLimitHeaders(ResendBroadcastRef, 'Sending, or scheduled.'), ...resendErrorResponses(...RESEND_BODY_ERRORS, 404, 409) },
    },
  }, async (request) => {
    const at = request.body.scheduled_at === undefined ? undefined : sendTimeOrRefused(request.body.scheduled_at, '/scheduled_at');
    const b = await sendBroadcast(broadcasts, request.mailAuth, request.params.id, at?.toISOString());
    return { object: 'broadcast' as const, id: b.id };
  });

  app.get('/broadcasts/:id/recipients', {
    config,
    schema: {
      tags, operationId: 'resendListBroadcastRecipients', summary: 'A broadcast\'s recipients with an event of one type',
      description: 'sent and delivered are both the receiving server\'s acceptance; opens and clicks are people\'s (not flagged automated); bounces are permanent.',
      params: IdParams,
      querystring: Type.Composite([ResendPageQuery, Type.Object({ type: StringEnum(RECIPIENT_EVENT_TYPES), email: Type.Optional(Type.String({ maxLength: 254 })), bounce_type: Type.Optional(StringEnum(['permanent', 'transient', 'undetermined'] as const)) })], { additionalProperties: false }),
      response: { 200: withRateLimitHeaders(ResendBroadcastRecipientList, 'Newest message first.'), ...resendErrorResponses(...RESEND_ERRORS, 400, 404, 422) },
    },
  }, async (request) => {
    const b = await visible(request.mailAuth, request.params.id);
    // Every bounce recorded is permanent: asking for another kind finds none.
    if (request.query.bounce_type !== undefined && request.query.bounce_type !== 'permanent') return { object: 'list' as const, has_more: false, data: [] };
    const { bounce_type: _, ...query } = request.query;
    return broadcastRecipients(pg, b.id, query);
  });

  app.get('/broadcasts/:id/clicked-links', {
    config,
    schema: {
      tags, operationId: 'resendListBroadcastClickedLinks', summary: 'The links people clicked in a broadcast\'s messages', description: 'Most clicked first; machines\' clicks (flagged automated) are not counted.',
      params: IdParams, querystring: ResendPageQuery,
      response: { 200: withRateLimitHeaders(ResendClickedLinkList, 'Most clicked first.'), ...resendErrorResponses(...RESEND_ERRORS, 400, 404) },
    },
  }, async (request) => clickedLinks(pg, (await visible(request.mailAuth, request.params.id)).id, request.query));

  app.post('/broadcasts/:id/cancel', {
    config,
    schema: { tags, operationId: 'resendCancelBroadcast', summary: 'Cancel a broadcast', description: 'Any state but sent and canceled (409 not_cancelable).', params: IdParams, response: { 200: withRateLimitHeaders(ResendBroadcastRef, 'Canceled.'), ...resendErrorResponses(...RESEND_ERRORS, 404, 409) } },
  }, async (request) => {
    const b = await cancelBroadcast(broadcasts, request.mailAuth, request.params.id);
    return { object: 'broadcast' as const, id: b.id };
  });
}
