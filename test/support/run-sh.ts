// `bash infra/local/run.sh` as a new user runs it (the README's first command), for the tests of the
// quick start: its output kept, waited on, and its end by Ctrl-C or, after a test, by killing its group.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { testEnv } from './env.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A new user's environment: development, the file's empty databases (`databases`: freshDatabases' env),
 * a port and a state folder of its own, no admin token.
 */
export function newUserEnv(databases: Record<string, string>, port: string, state: string): Record<string, string> {
  return {
    ...testEnv(),
    NODE_ENV: 'development',
    LOG_LEVEL: 'info',
    ...databases,
    HTTP_PORT: port,
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    LOCAL_STATE_DIR: state,
    ADMIN_TOKEN: '',
  };
}

export class RunSh {
  readonly process: ChildProcess;
  private text = '';

  constructor(env: Record<string, string>) {
    // A group of its own, so that kill() ends its node processes and their tees too.
    this.process = spawn('bash', ['infra/local/run.sh'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    this.process.stdout!.on('data', (d) => (this.text += d));
    this.process.stderr!.on('data', (d) => (this.text += d));
  }

  get output(): string {
    return this.text;
  }

  /** Waits until run.sh has printed `text` `times` times; fails with its output if it exits first or time runs out. */
  async printed(text: string, times = 1, timeoutMs = 240_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (this.text.split(text).length - 1 < times) {
      if (this.exited) throw new Error(`run.sh exited (${this.process.exitCode ?? this.process.signalCode}) before "${text}":\n${this.text.slice(-4000)}`);
      if (Date.now() > end) throw new Error(`no "${text}" (×${times}) within ${timeoutMs} ms:\n${this.text.slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Ctrl-C (SIGINT): run.sh stops everything it started; its exit code. */
  async interrupt(): Promise<number | null> {
    if (this.exited) return this.process.exitCode;
    const exited = new Promise<number | null>((resolve) => this.process.once('exit', (code) => resolve(code)));
    this.process.kill('SIGINT');
    return exited;
  }

  /**
   * After a test: the whole process group (run.sh, its node processes and their tees), also when run.sh
   * itself has exited already (what it started may not have).
   */
  async kill(): Promise<void> {
    const exited = this.exited ? Promise.resolve() : new Promise((r) => this.process.once('exit', r));
    try {
      process.kill(-this.process.pid!, 'SIGKILL');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err; // the group is gone already
    }
    await exited;
  }

  private get exited(): boolean {
    return this.process.exitCode !== null || this.process.signalCode !== null;
  }
}
