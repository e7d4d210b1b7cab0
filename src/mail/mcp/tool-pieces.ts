// What the mail tools share: their annotations, the id argument (the REST path
// parameter), and the text of a page's summary.
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { describedFor } from '../../platform/mcp/tool.ts';
import { IdParams } from '../http/mail-schemas.ts';

/** A tool whose work leaves the service: mail goes out to people. */
export const SENDS: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };
/** A tool that changes or stops what is there; a repeat changes nothing more. */
export const CHANGES: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };
/** A tool that adds a record, or finds it already there. */
export const ADDS_ONCE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** The REST path's `id`, described for a model. */
export const idArg = (description: string) => describedFor(IdParams.properties.id, description);

/** One line per item, and how to get the next page. */
export function pageLines(items: string[], noun: string, none: string, next: string | undefined): string {
  if (items.length === 0) return none;
  return [`${items.length} ${noun}${items.length === 1 ? '' : 's'}, newest first:`, ...items, ...(next ? [next] : [])].join('\n');
}
