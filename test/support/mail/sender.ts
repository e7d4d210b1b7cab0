// Mail sender processes for tests: `workers/run.ts mail-sender` with the test env, a relay and settings of the test's.
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTs, stopChild, waitForOutput, type Child } from '../processes.ts';

/** Debian's libfaketime (package faketime, installed by stack.sh), for the architecture at hand. */
export function libfaketime(): string {
  const found = readdirSync('/usr/lib').map((dir) => `/usr/lib/${dir}/faketime/libfaketimeMT.so.1`).find((path) => existsSync(path));
  if (!found) throw new Error('libfaketime not found: install Debian\'s faketime (infra/local/stack.sh does)');
  return found;
}

/**
 * A clock a test moves while the process runs: libfaketime reads it from a file at every call
 * (FAKETIME_NO_CACHE), so `set("2031-03-01 23:59:52")` puts the process's clock at that moment
 * (UTC), from where it runs on.
 */
export interface MovableClock {
  file: string;
  set(time: string): void;
}

export function movableClock(start: string): MovableClock {
  const file = join(mkdtempSync(join(tmpdir(), 'linkmail-clock-')), 'faketime');
  const set = (time: string) => writeFileSync(file, `@${time}\n`);
  set(start);
  return { file, set };
}

/**
 * Starts a sender and waits until it is ready; `fakeTime` ("2031-03-01 23:59:20", UTC) starts its
 * clock at that moment, from where it runs on, or a movable clock sets it (movableClock). libfaketime is
 * preloaded into node itself (not run through the faketime command, which would stand between the test
 * and the process it signals).
 */
export async function startMailSender(env: Record<string, string>, fakeTime?: string | MovableClock): Promise<Child> {
  // Timers run on the monotonic clock, left real so that the process's waits keep their length.
  const faked: Record<string, string> | undefined = typeof fakeTime === 'string' ? { FAKETIME: `@${fakeTime}` } : fakeTime ? { FAKETIME_TIMESTAMP_FILE: fakeTime.file, FAKETIME_NO_CACHE: '1' } : undefined;
  const clock: Record<string, string> = faked ? { LD_PRELOAD: libfaketime(), ...faked, FAKETIME_DONT_FAKE_MONOTONIC: '1', TZ: 'UTC' } : {};
  const child = startTs('workers/run.ts', ['mail-sender'], { LOG_LEVEL: 'info', ...env, ...clock });
  await waitForOutput(child, 'worker process ready', 90_000);
  return child;
}

/** Stops a sender (SIGTERM, or `signal`) and waits for it to exit. */
export const stopMailSender = (child: Child, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => stopChild(child, signal);
