// Lets a worker thread run only on CPU time nothing else wants. Linux's
// SCHED_IDLE policy does exactly that (a waking event loop takes the core at
// once), set on this thread with util-linux's chrt since Node has no call for
// it; where that is not possible, a high nice value is the next best thing.
import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

export function runAtIdlePriority(fallbackNice = 19): 'idle' | 'nice' | 'normal' {
  // Elsewhere a priority set here would apply to the whole process, event loop included.
  if (process.platform !== 'linux') return 'normal';
  try {
    // /proc/thread-self names this thread: "<pid>/task/<tid>".
    const tid = readlinkSync('/proc/thread-self').split('/').pop()!;
    execFileSync('chrt', ['--idle', '--pid', '0', tid], { stdio: 'ignore', timeout: 2000 });
    return 'idle';
  } catch {
    try {
      setPriority(fallbackNice);
      return 'nice';
    } catch {
      return 'normal';
    }
  }
}
