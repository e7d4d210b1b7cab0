// The names of the scan journal's segment files. A segment is written under its open name and
// renamed to its sealed name once closed; only sealed segments are shipped.
//
// Two generations: segments of JSON-object lines (`.open`, `.jsonl`), which versions before issue
// 52's journal lines wrote and read, and segments of this version's lines (`.lines-open`, `.lines`:
// journal-line.ts), which an older version must not read. An older version that adopts a stopped
// process's directory renames `.open` to `.jsonl` and ships only `.jsonl`, so it leaves this
// version's segments alone (on disk, for a newer version to ship). This version ships both.

/** Where the journal writes now, and what it renames that to once sealed. */
export const OPEN_SEGMENT = '.lines-open';
const SEALED_SEGMENT = '.lines';
/** The older generation's names. */
const OLD_OPEN_SEGMENT = '.open';
const OLD_SEALED_SEGMENT = '.jsonl';

/** Whether a file is a sealed segment, ready to ship. */
export const isSealedSegment = (file: string): boolean => file.endsWith(SEALED_SEGMENT) || file.endsWith(OLD_SEALED_SEGMENT);

/** A segment's sealed name: an open segment's (of either generation) renamed, any other name as it is. */
export function sealedName(file: string): string {
  if (file.endsWith(OPEN_SEGMENT)) return file.slice(0, -OPEN_SEGMENT.length) + SEALED_SEGMENT;
  if (file.endsWith(OLD_OPEN_SEGMENT)) return file.slice(0, -OLD_OPEN_SEGMENT.length) + OLD_SEALED_SEGMENT;
  return file;
}
