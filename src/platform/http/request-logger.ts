// A request's logger, made only when the request logs something. Fastify gives every request a child
// logger carrying its id; pino's child() copies the bindings and, with redaction configured, builds
// a serializer for them: a few microseconds on every request, redirects included, though a request
// that goes well logs nothing (request logging is off, server.ts).
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

export class LazyRequestLogger {
  #child: Logger | undefined;
  readonly #parent: Logger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;

  constructor(parent: Logger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  /** The child logger, made on first use. */
  get logger(): Logger {
    return (this.#child ??= this.#parent.child(this.#bindings, this.#options));
  }

  get level(): string {
    return this.#child?.level ?? this.#parent.level;
  }

  isLevelEnabled(level: string): boolean {
    return this.#parent.isLevelEnabled(level);
  }

  // Methods on the prototype (not arrow fields): nothing but the object itself is made per request.
  // A level that is off costs neither the child nor the call.
  trace(...args: unknown[]): void { this.#log('trace', args); }
  debug(...args: unknown[]): void { this.#log('debug', args); }
  info(...args: unknown[]): void { this.#log('info', args); }
  warn(...args: unknown[]): void { this.#log('warn', args); }
  error(...args: unknown[]): void { this.#log('error', args); }
  fatal(...args: unknown[]): void { this.#log('fatal', args); }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.logger.child(bindings, options);
  }

  #log(level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal', args: unknown[]): void {
    if (!this.#parent.isLevelEnabled(level)) return;
    (this.logger[level] as (...a: unknown[]) => void)(...args);
  }
}

/** Fastify's childLoggerFactory: the request's logger, made lazily. */
export function lazyRequestLogger(this: unknown, parent: Logger, bindings: Bindings, options: ChildLoggerOptions): Logger {
  return new LazyRequestLogger(parent, bindings, options) as unknown as Logger;
}
