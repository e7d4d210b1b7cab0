// MCP tools over broadcasts: create_broadcast, send_broadcast, get_broadcast
// and get_broadcast_report, through the functions of /api/v1/broadcasts, with
// the spec's fields as arguments and its objects as results. Full keys use
// them; test keys read reports too, as in REST.
import { Type } from '@sinclair/typebox';
import { CREATES, READ_ONLY } from '../../platform/mcp/tool.ts';
import { createBroadcast, getBroadcast, getBroadcastReport, sendBroadcast, type BroadcastOperationDeps } from '../broadcasts/broadcast-operations.ts';
import { BroadcastReport } from '../broadcasts/broadcast-report.ts';
import { BroadcastSchema, CreateBody, SendBroadcastBody } from '../broadcasts/broadcast-schemas.ts';
import { mailTool } from './mail-tool.ts';
import { idArg, SENDS } from './tool-pieces.ts';

const BROADCASTING = { access: 'broadcasts', kinds: ['full'] } as const;
const REPORTING = { access: 'reports', kinds: ['full', 'test'] } as const;

const broadcastId = idArg('The broadcast\'s id (from create_broadcast).');

export function broadcastTools(deps: BroadcastOperationDeps) {
  const create = mailTool(BROADCASTING, {
    name: 'create_broadcast',
    title: 'Create a broadcast',
    description:
      'Creates a broadcast (POST /api/v1/broadcasts): one message per eligible contact of a topic, sent when send_broadcast starts it. `name`, `from` (on a verified ' +
      'domain), `topic` (a slug from list_topics); optional `segment_id` (from list_segments) narrows it. Content: `subject` and `html` or `text` (personalised with ' +
      '{{contact.first_name}}, {{contact.email}}, {{contact.<property>}}), or a published `template`. Optional A/B test (`subject_b` with `ab_test`), `reply_to`, ' +
      '`preview_text`, and `scheduled_at` (then it is scheduled; without, a draft). Errors: topic_not_found, segment_not_found, from_domain_not_verified, missing_subject, missing_content.',
    input: CreateBody,
    output: BroadcastSchema,
    annotations: CREATES,
    async run(args, ctx) {
      const b = await createBroadcast(deps, ctx.grant, args);
      return { summary: `Created broadcast "${b.name}" (id ${b.id}), ${b.status}${b.scheduled_at ? ` for ${b.scheduled_at}` : ''}, topic ${b.topic}.`, result: b };
    },
  });

  const send = mailTool(BROADCASTING, {
    name: 'send_broadcast',
    title: 'Send or schedule a broadcast',
    description:
      'Sends a draft or scheduled broadcast now (POST /api/v1/broadcasts/:id/send), or with `scheduled_at` schedules it for then (a new time replaces the pending one). ' +
      'Sending fans out in batches within a second or so; follow it with get_broadcast (status sending, then sent) and get_broadcast_report. A broadcast in another state is refused with not_schedulable.',
    input: Type.Object({ id: broadcastId, scheduled_at: SendBroadcastBody.properties.scheduled_at }, { additionalProperties: false }),
    output: BroadcastSchema,
    annotations: SENDS,
    async run(args, ctx) {
      const b = await sendBroadcast(deps.broadcasts, ctx.grant, args.id, args.scheduled_at);
      return { summary: args.scheduled_at ? `Broadcast ${b.id} scheduled for ${b.scheduled_at}.` : `Broadcast ${b.id} is being sent to the contacts of topic ${b.topic}.`, result: b };
    },
  });

  const get = mailTool(BROADCASTING, {
    name: 'get_broadcast',
    title: 'Get a broadcast',
    description:
      'A broadcast (GET /api/v1/broadcasts/:id): its fields and `status` (draft, scheduled, sending, testing, sent, canceled), its times, the A/B winner, and `stats` ' +
      '(eligible, suppressed, queued, skipped) once the worker started it.',
    input: Type.Object({ id: broadcastId }, { additionalProperties: false }),
    output: BroadcastSchema,
    annotations: READ_ONLY,
    async run(args, ctx) {
      const b = await getBroadcast(deps.broadcasts, ctx.grant, args.id);
      const stats = b.stats ? `: ${b.stats.eligible} eligible, ${b.stats.queued} queued, ${b.stats.suppressed} suppressed, ${b.stats.skipped} skipped` : '';
      return { summary: `Broadcast "${b.name}" (id ${b.id}) is ${b.status}${stats}.`, result: b };
    },
  });

  const report = mailTool(REPORTING, {
    name: 'get_broadcast_report',
    title: 'A broadcast\'s report',
    description:
      'The report of a broadcast (GET /api/v1/broadcasts/:id/report; sends no mail): totals (recipients, queued, sent, delivered, bounced, complained, opened, clicked, ' +
      'unsubscribed), rates (open, click, unsubscribe over delivered; bounce over sent; null with no denominator), the A/B variants and winner, and the most clicked links. ' +
      'Opens and clicks are counted only when the sending domain has a tracking host (tracking_enabled).',
    input: Type.Object({ id: broadcastId }, { additionalProperties: false }),
    output: BroadcastReport,
    annotations: READ_ONLY,
    async run(args, ctx) {
      const r = await getBroadcastReport(deps, ctx.grant, args.id);
      const t = r.totals;
      const rate = (x: number | null) => (x === null ? 'n/a' : `${Math.round(x * 1000) / 10}%`);
      return {
        summary: `Broadcast ${r.broadcast_id} (${r.status}): ${t.recipients} recipients, ${t.sent} sent, ${t.delivered} delivered, ${t.bounced} bounced, ${t.opened} opened, ${t.clicked} clicked; open rate ${rate(r.rates.open)}, click rate ${rate(r.rates.click)}.`,
        result: r,
      };
    },
  });

  return [create, send, get, report];
}
