// Starts project processes (ingress, workers, fixtures) as real child processes with this run's configuration.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { within } from '../../src/platform/within.ts';
import { testEnv } from './env.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every child this test file started, so that test/support/stop-children.ts can end those its hooks left. */
export const startedChildren = new Set<ChildProcess>();

/**
 * A port for a child to listen on: random, and below the kernel's ephemeral range (32768 and up
 * here), where any outgoing connection or port-0 listener of another process could already hold it.
 */
export const childPort = (): string => String(20000 + Math.floor(Math.random() * 12000));

export interface Child {
  process: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs a TypeScript entry point with node, with the test env plus overrides. */
export function startTs(entry: string, args: string[] = [], env: Record<string, string> = {}): Child {
  const child = spawn(process.execPath, [entry, ...args], {
    cwd: ROOT,
    env: { ...testEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  startedChildren.add(child);
  child.once('exit', () => startedChildren.delete(child));
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  return { process: child, output: () => output, exited };
}

/** Waits until the child printed `text`, failing with its output if it exits first or time runs out. */
export async function waitForOutput(child: Child, text: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!child.output().includes(text)) {
    if (child.process.exitCode !== null) throw new Error(`process exited (${child.process.exitCode}) before "${text}":\n${child.output()}`);
    if (Date.now() > end) throw new Error(`no "${text}" within ${timeoutMs} ms:\n${child.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts `workers/run.ts` with these worker kinds and waits until the process is ready. */
export async function startWorkerKinds(kinds: string[], env: Record<string, string> = {}): Promise<Child> {
  const child = startTs('workers/run.ts', kinds, { LOG_LEVEL: 'info', ...env });
  await waitForOutput(child, 'worker process ready', 90_000);
  return child;
}

/** Stops a child (SIGTERM, or `signal`) unless it has already ended, and waits for it to exit. */
export async function stopChild(child: Child | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!child || child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill(signal);
  // A project process ends its shutdown within SHUTDOWN_TIMEOUT_MS (10 s) or exits 1; one that outlives
  // that by far is a defect, failed here with its output (and killed) rather than left to a hook's timeout.
  // (child.exited never rejects: within's rejection is the bound running out.)
  try {
    await within(child.exited, STOP_BOUND_MS);
  } catch {
    const threads = threadStates(child.process.pid!);
    child.process.kill('SIGKILL');
    await child.exited;
    throw new Error(`process ${child.process.pid} did not exit within ${STOP_BOUND_MS} ms of ${signal}; its threads:\n${threads}\nthe end of its output:\n${child.output().slice(-8000)}`);
  }
}

const STOP_BOUND_MS = 30_000;

/**
 * Each thread of a process as Linux sees it: name, state (R running, S sleeping, D in the kernel), CPU
 * seconds so far and the kernel function it waits in. Tells a busy loop from a wait, and which wait.
 */
function threadStates(pid: number): string {
  try {
    return readdirSync(`/proc/${pid}/task`).map((tid) => {
      const read = (file: string) => readFileSync(`/proc/${pid}/task/${tid}/${file}`, 'utf8').trim();
      // Fields after the name in parentheses: state is the first, utime and stime the 12th and 13th (in clock ticks).
      const stat = read('stat');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / 100;
      return `  ${tid} ${read('comm')}: ${fields[0]}, ${cpuSeconds} s CPU, waiting in ${read('wchan') || '-'}`;
    }).join('\n');
  } catch (err) {
    return `  (unreadable: ${String(err)})`;
  }
}
