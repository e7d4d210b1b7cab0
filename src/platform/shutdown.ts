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
    const onSignal = (signal: NodeJS.Signals) => {
      const timer = setTimeout(() => {
        this.log.error({ signal }, 'shutdown timed out; exiting');
        process.exit(1);
      }, this.timeoutMs);
      timer.unref();
      void this.run(signal).then(() => process.exit(0));
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }

  private async closeAll(reason: string): Promise<void> {
    this.log.info({ reason }, 'shutting down');
    for (const closer of [...this.closers].reverse()) {
      try {
        this.log.debug({ component: closer.name }, 'closing');
        await closer.close();
      } catch (err) {
        this.log.warn({ err, component: closer.name }, 'error while closing');
      }
    }
    this.log.info('shutdown complete');
  }
}
