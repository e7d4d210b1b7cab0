// Small building blocks for work that runs beside requests: a task repeated on
// an interval without overlapping itself, and a wait that never fails or
// outlasts its time (for "do it now if you can; a relay catches up otherwise").

export class Repeating {
  private readonly run: () => Promise<void>;
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  /** `run` must not throw; a run still going when the next is due is not doubled. */
  constructor(
    run: () => Promise<void>,
    intervalMs: number,
  ) {
    this.run = run;
    this.intervalMs = intervalMs;
  }

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.run().finally(() => (this.running = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Stops repeating and waits for a run in progress. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}

/** Waits for `work` at most `timeoutMs`; a failure is passed to `onError`, never thrown. */
export async function bestEffort(work: Promise<unknown>, timeoutMs: number, onError: (err: unknown) => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  } catch (err) {
    onError(err);
  } finally {
    clearTimeout(timer);
  }
}
