// Start-up leaves garbage behind: module sources, the TypeScript loader's output,
// migrations, topic metadata, the link cache's warm-up reads. V8 collects it only
// when allocation asks for room, so an idle process would keep it for hours and
// its RSS say nothing of what it holds. One full collection once the process is
// ready drops it (docs/operations.md, "Memory").
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** One full, compacting garbage collection of this thread's heap, without needing `node --expose-gc`. */
export function collectStartUpGarbage(): void {
  // The flag makes V8 give new contexts a gc() function: only the context made here gets one, and
  // the flag is turned off again before any other context (a thread started later) is made.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
  setFlagsFromString('--no-expose-gc');
  // "last-resort" is V8's collection for low memory: it compacts and gives the freed pages back (a
  // plain gc() left the old generation's pages committed: 97 MB for 45 MB of live objects, once).
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}
