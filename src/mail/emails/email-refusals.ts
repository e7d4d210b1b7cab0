// The answers to what the email stores refuse: a cancel or reschedule of an
// email that is gone or handed over, an idempotency key used with another
// request, a list cursor that names no email of the list.
import { ApiError, notFound } from '../../platform/http/errors.ts';
import type { ListRefusal } from './email-list.ts';
import type { MessageChangeResult } from './message-changes.ts';

/** A refused cancel or reschedule, answered: 404 for no such email, 409 for one handed over (or not scheduled). */
export function orChangeRefused(result: MessageChangeResult): void {
  if (result.ok) return;
  const r = result.refusal;
  switch (r.reason) {
    case 'not_found': throw notFound('email');
    case 'not_cancelable': throw new ApiError(409, r.reason, `This email ${r.why}; only an email not yet handed over can be canceled.`);
    case 'not_schedulable': throw new ApiError(409, r.reason, `This email ${r.why}; only a scheduled email not yet handed over can be rescheduled.`);
  }
}

/** A message whose idempotency key was used with another request (`at` the item of a batch): 409. */
export const keyReusedError = (at = '') =>
  new ApiError(409, 'invalid_idempotent_request', 'This idempotency key was used with a different request; use a new key for a new message.', [{ path: `${at}/idempotency_key`, message: 'used with another request' }]);

/** A page of GET /emails that cannot be listed: 400 invalid_cursor, naming the parameter. */
export function listRefusalError(r: ListRefusal): ApiError {
  switch (r.reason) {
    case 'both_cursors': return new ApiError(400, 'invalid_cursor', 'Pass after or before, not both.', [{ path: '/before', message: 'after is given too' }]);
    case 'unknown_cursor':
      return new ApiError(400, 'invalid_cursor', `${r.param} is not the id of an email of this list; pass the id of an item of a previous page.`, [{ path: `/${r.param}`, message: 'unknown email id' }]);
  }
}
