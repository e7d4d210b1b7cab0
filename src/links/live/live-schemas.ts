// The live streams' filters (as the analytics API names them) and what a stream sends.
import { Type, type Static } from '@sinclair/typebox';
import { StringEnum, Uuid } from '../../platform/http/schema-types.ts';

export const DEVICES = ['desktop', 'mobile', 'tablet', 'console', 'smarttv', 'wearable', 'embedded', 'bot'] as const;

const filters = {
  country: Type.Optional(Type.String({ pattern: '^[A-Za-z]{2}$', description: 'Only scans from this country (ISO 3166-1 alpha-2, any case).' })),
  device: Type.Optional(StringEnum(DEVICES, { description: 'Only scans from this kind of device.' })),
  trigger: Type.Optional(StringEnum(['link', 'qr'] as const, { description: 'Only QR scans (qr) or only other visits (link).' })),
};

export const WorkspaceStreamQuery = Type.Object(
  { linkId: Type.Optional(Uuid({ description: 'Only this link\'s scans.' })), ...filters },
  { additionalProperties: false },
);
export type WorkspaceStreamQueryType = Static<typeof WorkspaceStreamQuery>;

export const LinkStreamQuery = Type.Object(filters, { additionalProperties: false });

export const STREAM_DESCRIPTION = [
  'Server-Sent Events (text/event-stream), one `scan` event per recorded scan of the workspace that matches the filters, usually within a second of the redirect:',
  '`id:` the stream\'s position (send it back as `Last-Event-ID` to resume: the scans after it follow, each once, on any ingress, for 5 minutes), `event: scan`,',
  '`data:` the scan as in a `scan.created` webhook\'s `data` (no IP address). A quiet stream gets a heartbeat comment (with its position as `id:`) every 15 s.',
  'A `resync` event ({"reason":"resume_expired"}) says the Last-Event-ID was older than what is kept: scans between it and now are not sent.',
  'The stream ends with an `end` event whose `reason` is slow_client (the client read too slowly; reconnect with Last-Event-ID), revoked (the key was revoked), or shutdown (the ingress is stopping; reconnect).',
  'Open streams per workspace: 100 (Enterprise); beyond that 429 stream_limit_reached.',
  'When this server cannot read the scans right now (Kafka away), 503 live_scans_unavailable with Retry-After.',
].join(' ');
