// MCP tools over what a broadcast can target: list_topics and list_segments,
// through the stores' lists that GET /api/v1/topics and GET /api/v1/segments
// answer with. Full keys use them.
import { Type } from '@sinclair/typebox';
import { describedFor, READ_ONLY, withDefault } from '../../platform/mcp/tool.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { SegmentList } from '../audience/segment-schemas.ts';
import { Segments, toSegment } from '../audience/segments.ts';
import { TopicList } from '../audience/subscription-topic-schemas.ts';
import { toSubscriptionTopic, type SubscriptionTopics } from '../audience/subscription-topics.ts';
import { PageQuery } from '../http/pagination.ts';
import { mailTool } from './mail-tool.ts';
import { pageLines } from './tool-pieces.ts';

const MANAGING = { access: 'manage', kinds: ['full'] } as const;

const pageArgs = (noun: string) => Type.Object(
  {
    limit: withDefault(describedFor(PageQuery.properties.limit, `${noun} per page, 1 to 100; default 20.`)),
    cursor: describedFor(PageQuery.properties.cursor, 'next_cursor of the previous page, unchanged.'),
  },
  { additionalProperties: false },
);

const more = (tool: string, cursor: string | null) => (cursor ? `More: call ${tool} again with cursor "${cursor}".` : undefined);

export function audienceTools(deps: { subscriptionTopics: SubscriptionTopics; pg: Pool }) {
  const segments = new Segments(deps.pg);

  const topics = mailTool(MANAGING, {
    name: 'list_topics',
    title: 'List topics',
    description:
      'A page of the organization\'s topics, newest first (GET /api/v1/topics): what broadcasts are about. Each has a `slug` (what create_broadcast `topic` takes) and ' +
      'a `default_subscription`: opt_in topics reach every contact until it opts out, opt_out topics only those who opted in.',
    input: pageArgs('Topics'),
    output: TopicList,
    annotations: READ_ONLY,
    async run(args, ctx) {
      const page = await deps.subscriptionTopics.list(ctx.grant.organizationId, args, toSubscriptionTopic);
      const lines = page.data.map((t) => `- ${t.slug}: ${t.name} (${t.default_subscription}, id ${t.id})`);
      return { summary: pageLines(lines, 'topic', 'No topics.', more('list_topics', page.next_cursor)), result: page };
    },
  });

  const segmentList = mailTool(MANAGING, {
    name: 'list_segments',
    title: 'List segments',
    description:
      'A page of the organization\'s segments, newest first (GET /api/v1/segments): named filters over contacts. A broadcast with `segment_id` goes only to the ' +
      'contacts of its topic that the segment matches when it fans out.',
    input: pageArgs('Segments'),
    output: SegmentList,
    annotations: READ_ONLY,
    async run(args, ctx) {
      const page = await segments.list(ctx.grant.organizationId, args, toSegment);
      const lines = page.data.map((s) => `- ${s.name} (id ${s.id})`);
      return { summary: pageLines(lines, 'segment', 'No segments.', more('list_segments', page.next_cursor)), result: page };
    },
  });

  return [topics, segmentList];
}
