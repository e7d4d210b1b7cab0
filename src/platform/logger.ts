// Structured JSON logging (pino). One root logger; modules take a child with their name.
import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

/**
 * Under vitest a process's lines go through console, so that the runner shows them beside the test
 * that logged them, and only when that test fails; elsewhere pino writes to standard output itself.
 */
const destination: DestinationStream | undefined = process.env.VITEST ? { write: (line) => console.log(line.trimEnd()) } : undefined;

export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, name = 'linkmail'): Logger {
  return destination ? pino({ name, level: config.LOG_LEVEL }, destination) : pino({ name, level: config.LOG_LEVEL });
}
