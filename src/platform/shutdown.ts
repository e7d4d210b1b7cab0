// Graceful shutdown: on SIGTERM/SIGINT, run the registered closers in reverse
// order of registration (stop taking work first, close stores last), each
// awaited, all within SHUTDOWN_TIMEOUT_MS; then exit.
import type { Logger } from './logger.ts';

type Closer = { name: string; close: () => Promise<unknown> | unknown };

export class Shutdown {
  private readonly log: Logger;
  private readonly timeoutMs: number;
  private readonly closers: Closer[] = [];
  private running: Promise<void> | undefined;
  /** Set by installSignalHandlers: this process's lifecycle is ours, so fail() may exit it. */
  private ownsProcess = false;
  /** The closer being awaited, while closing: named when a shutdown runs out of time. */
  closing: string | undefined;
  /** The part that could not go on (fail()), if any: for /readyz. */
  failure: { component: string; error: string } | undefined;

  constructor(log: Logger, timeoutMs: number) {
    this.log = log;
    this.timeoutMs = timeoutMs;
  }

  /** Registers something to close; later registrations close first. */
  add(name: string, close: Closer['close']): void {
    this.closers.push({ name, close });
  }

  /** Closes everything once; a second call waits for the first. */
  run(reason: string): Promise<void> {
    this.running ??= this.closeAll(reason);
    return this.running;
  }

  /** Installs signal handlers that drain and then exit the process. */
  installSignalHandlers(): void {
    this.ownsProcess = true;
    const onSignal = (signal: NodeJS.Signals) => this.exitAfterShutdown(signal, 0);
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }

  /**
   * A part of the process cannot go on (e.g. a consumer kafkajs will not restart): marks the process
   * failed and, in a process that installed the signal handlers, shuts down gracefully and exits 1,
   * so that a supervisor starts it again. Elsewhere (a test hosting parts in-process) it only marks.
   */
  fail(component: string, err: unknown): void {
    const error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    this.failure ??= { component, error };
    this.log.error({ err, component }, 'cannot go on; the process is failed');
    if (!this.ownsProcess) return;
    process.exitCode = 1; // should the loop run dry before the shutdown ends, the exit is still a failure
    this.exitAfterShutdown(`failed: ${component}`, 1);
  }

  private exitAfterShutdown(reason: string, code: number): void {
    const timer = setTimeout(() => {
      this.log.error({ reason, closing: this.closing }, 'shutdown timed out; exiting');
      process.exit(1);
    }, this.timeoutMs);
    timer.unref();
    // A failure during (or before) a signal's shutdown still ends in a non-zero code.
    void this.run(reason).then(() => process.exit(this.failure ? 1 : code));
  }

  private async closeAll(reason: string): Promise<void> {
    this.log.info({ reason }, 'shutting down');
    for (const closer of [...this.closers].reverse()) {
      this.closing = closer.name;
      try {
        this.log.debug({ component: closer.name }, 'closing');
        await closer.close();
      } catch (err) {
        this.log.warn({ err, component: closer.name }, 'error while closing');
      }
    }
    this.closing = undefined;
    this.log.info('shutdown complete');
  }
}
