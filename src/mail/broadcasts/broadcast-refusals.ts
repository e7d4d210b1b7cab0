// The answers to what the broadcast store refuses (a transition from the wrong
// state, a resend against the rules) and to ids that name no broadcast.
import { ApiError, notFound } from '../../platform/http/errors.ts';
import { isUuid } from '../../platform/http/validation.ts';
import { toBroadcast, type BroadcastRefusal, type Transition } from './broadcasts.ts';

/** The answer to a refused transition. */
export function refused(r: BroadcastRefusal): ApiError {
  switch (r.reason) {
    case 'not_found': return notFound('broadcast');
    case 'not_schedulable': return new ApiError(409, r.reason, `The broadcast is ${r.status}; only a draft or scheduled broadcast can be sent or scheduled.`);
    case 'not_cancelable': return new ApiError(409, r.reason, `The broadcast is already ${r.status}.`);
    case 'not_editable': return new ApiError(409, r.reason, `The broadcast is ${r.status}; only a draft can be changed or removed.`);
    case 'not_testing': return new ApiError(409, r.reason, `The broadcast is ${r.status}; only a broadcast in its A/B test can be decided.`);
    case 'not_resendable': return new ApiError(409, r.reason, r.isResend ? 'The broadcast is itself a resend; resend its parent instead.' : `The broadcast is ${r.status}; only a sent broadcast can be resent.`);
    case 'topic_required': return new ApiError(422, r.reason, r.apiV1
      ? 'The broadcast was made under /api/v1, where a broadcast always has a topic; give another topic_id instead of null.'
      : 'A broadcast without a segment needs its topic; set a segment_id first, or keep the topic.', [{ path: '/topic_id', message: 'cannot be null here' }]);
    case 'subject_from_template': return new ApiError(422, r.reason, 'The broadcast takes its subject from its template; a resend cannot change it.');
    case 'resend_exists': return new ApiError(409, r.reason, `The broadcast already has a resend (${r.resendId}); cancel it first to make another.`);
    case 'resend_too_early': return new ApiError(409, r.reason, `A resend can go out ${r.waitHours} hours after its parent finished: not before ${r.earliest.toISOString()}.`);
  }
}

/** The broadcast a transition left, or the answer to its refusal. */
export function done(t: Transition) {
  if (!t.ok) throw refused(t);
  return toBroadcast(t.broadcast);
}

/** Ids that are not uuids name no broadcast (and must not reach a uuid column). */
export function broadcastId(id: string): string {
  if (!isUuid(id)) throw notFound('broadcast');
  return id;
}

/** The row, or 404. */
export function found<T>(row: T | undefined): T {
  if (!row) throw notFound('broadcast');
  return row;
}
