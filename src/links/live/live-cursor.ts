// A live stream's position, sent as each SSE event's `id` and given back as
// `Last-Event-ID`: for every partition of the `scans` topic, the offset of the last
// message the stream has passed (delivered, or looked at and filtered out). It comes
// from Kafka, not from a process, so any ingress can resume it: it delivers the
// messages after those offsets, and no others.
//
// Text form: `<partition>.<offset in base 36>` joined by `_`, e.g. `0.2s_1.4k_2.-1`;
// at most 64 partitions, offsets -1 (nothing passed yet) up to 2^53.

export type Cursor = Map<number, number>;

const MAX_PARTITIONS = 64;
const PART = /^(\d{1,2})\.(-1|[0-9a-z]{1,11})$/;

export function formatCursor(cursor: Cursor): string {
  let out = '';
  for (const [partition, offset] of cursor) out += `${out ? '_' : ''}${partition}.${offset < 0 ? '-1' : offset.toString(36)}`;
  return out;
}

/** The cursor a Last-Event-ID names; undefined when it is not one this service wrote. */
export function parseCursor(text: string): Cursor | undefined {
  if (text.length === 0 || text.length > 1024) return undefined;
  const cursor: Cursor = new Map();
  for (const part of text.split('_')) {
    const m = PART.exec(part);
    if (!m) return undefined;
    const partition = Number(m[1]);
    const offset = m[2] === '-1' ? -1 : parseInt(m[2]!, 36);
    if (partition >= MAX_PARTITIONS || !Number.isSafeInteger(offset) || cursor.has(partition)) return undefined;
    cursor.set(partition, offset);
  }
  return cursor;
}
