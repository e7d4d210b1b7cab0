// Keeps process.nextTick on V8's fast path for the life of the thread (issue 52).
//
// Node's nextTick makes each queue entry with an object literal whose first keys are symbols. V8
// defines such keys through an inline cache that remembers the entry's hidden classes (maps); the
// maps are held weakly, and an entry lives for one tick only. So each full garbage collection that
// finds no entry queued frees the maps, the next entry gets new ones, and after a few collections the
// cache gives up (megamorphic): every nextTick then defines its keys in V8's runtime. A redirect
// makes six nextTicks (Node's HTTP and stream code); in the ingress they cost 7% of the event loop's
// time, where bare Node's HTTP server, which never runs a full collection, pays nothing for them.
//
// One entry kept alive keeps its maps (a map holds its parent alive), so the cache stays
// monomorphic. Node hands out its entries only to async hooks: one is enabled for a single nextTick
// at start and disabled again at once, before any other code runs.
import { createHook } from 'node:async_hooks';

let kept: object | undefined;
const hook = createHook({
  init(_asyncId, type, _triggerAsyncId, resource) {
    if (type === 'TickObject') kept ??= resource;
  },
}).enable();
process.nextTick(() => {});
hook.disable();

/** The kept entry (a test's way to see that one was found). */
export const keptTickObject = (): object | undefined => kept;
