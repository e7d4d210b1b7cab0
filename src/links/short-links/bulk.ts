// Bulk link operations: each validated and applied in its own transaction, so
// one bad operation is reported and the others still happen.
import { ApiError } from '../../platform/http/errors.ts';
import { describeError } from '../../platform/http/server.ts';
import { compileBodyValidator, summarize, type ValidationFailure } from '../../platform/http/validation.ts';
import { Type } from '@sinclair/typebox';
import { StringEnum } from '../../platform/http/schema-types.ts';
import { CreateLinkBody, UpdateLinkBody, type CreateLinkInput, type LinkType, type UpdateLinkInput } from './link-schemas.ts';
import { orRefused } from './link-refusals.ts';
import { toLink, type LinkStore, type LinkRow } from './link-store.ts';

// The envelope first; the link or changes inside are then checked with the same schemas as the single-link routes.
const checkOperation = compileBodyValidator(
  Type.Object(
    {
      action: StringEnum(['create', 'update', 'delete'] as const),
      id: Type.Optional(Type.String()),
      link: Type.Optional(Type.Unknown()),
      changes: Type.Optional(Type.Unknown()),
    },
    { additionalProperties: false },
  ),
);
const checkCreate = compileBodyValidator(CreateLinkBody);
const checkUpdate = compileBodyValidator(UpdateLinkBody);

export interface BulkItemResult {
  index: number;
  action: string;
  status: number;
  link?: LinkType;
  error?: { code: string; message: string; details?: { path: string; message: string }[] };
}

type Operation = { action: 'create'; link?: unknown; id?: string; changes?: unknown } | { action: 'update' | 'delete'; id?: string; link?: unknown; changes?: unknown };

/** The operation's problems as a 400, with paths relative to the operation. */
function invalid(failure: ValidationFailure, prefix = ''): ApiError {
  const details = failure.details.map((d) => ({ path: prefix + d.path, message: d.message }));
  return new ApiError(400, failure.code, `Invalid operation: ${summarize(details)}`, details);
}

const misuse = (path: string, message: string): ValidationFailure => ({ code: 'validation_failed', details: [{ path, message }] });

async function applyOne(store: LinkStore, workspaceId: string, raw: unknown): Promise<{ status: number; row: LinkRow; scanLimitChanged?: boolean }> {
  const opProblems = checkOperation(raw);
  if (opProblems) throw invalid(opProblems);
  const op = raw as Operation;
  if (op.action === 'create') {
    if (op.link === undefined || op.id !== undefined || op.changes !== undefined) throw invalid(misuse('/link', 'create takes only "link"'));
    const problems = checkCreate(op.link);
    if (problems) throw invalid(problems, '/link');
    return { status: 201, row: orRefused(await store.tryCreate(workspaceId, op.link as CreateLinkInput)).row };
  }
  if (typeof op.id !== 'string' || op.link !== undefined) throw invalid(misuse('/id', `${op.action} takes "id"${op.action === 'update' ? ' and "changes"' : ''}`));
  if (op.action === 'update') {
    const problems = checkUpdate(op.changes);
    if (problems) throw invalid(problems, '/changes');
    const { row, scanLimitChanged } = orRefused(await store.update(workspaceId, op.id, op.changes as UpdateLinkInput));
    return { status: 200, row, scanLimitChanged };
  }
  if (op.changes !== undefined) throw invalid(misuse('/changes', 'delete takes only "id"'));
  const row = await store.softDelete(workspaceId, op.id);
  if (!row) throw new ApiError(404, 'not_found', 'link not found');
  return { status: 200, row };
}

/** The result to answer with, and the links whose scan limit changed (with the new limit). */
export async function runBulk(store: LinkStore, workspaceId: string, operations: readonly unknown[], baseUrl: string) {
  const results: BulkItemResult[] = [];
  const scanLimitChanges: { linkId: string; scanLimit: number | null }[] = [];
  for (const [index, raw] of operations.entries()) {
    const action = typeof (raw as { action?: unknown })?.action === 'string' ? (raw as { action: string }).action : 'unknown';
    try {
      const { status, row, scanLimitChanged } = await applyOne(store, workspaceId, raw);
      results.push({ index, action, status, link: toLink(row, baseUrl) });
      if (scanLimitChanged) scanLimitChanges.push({ linkId: row.id, scanLimit: row.scan_limit });
    } catch (err) {
      // Every failure is this operation's result; the others, before and after, stand.
      const { status, code, message, details } = describeError(err as Error);
      results.push({ index, action, status, error: { code, message, ...(details ? { details } : {}) } });
    }
  }
  const succeeded = results.filter((r) => r.link).length;
  return { result: { object: 'bulk_result' as const, succeeded, failed: results.length - succeeded, results }, scanLimitChanges };
}
