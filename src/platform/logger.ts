// Structured JSON logging (pino). One root logger; modules take a child with their name.
import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, name = 'linkmail'): Logger {
  return pino({ name, level: config.LOG_LEVEL });
}
