// Structured JSON logging (pino). One root logger; modules take a child with their name.
import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

/**
 * Fields that hold a secret in clear wherever they appear (an opened webhook row, a claimed
 * delivery, nodemailer's dkim options, the configuration): no code logs them, and should one
 * ever log such an object, pino writes "[redacted]" instead.
 */
const SECRET_FIELDS = ['secret', 'secrets', 'previous_secret', 'signing_secret', 'privateKey', 'SECRETS_KEYS'];
const REDACT = [...SECRET_FIELDS, ...SECRET_FIELDS.map((f) => `*.${f}`), '*.dkim.privateKey'];

export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, name = 'linkmail'): Logger {
  return pino({ name, level: config.LOG_LEVEL, redact: { paths: REDACT, censor: '[redacted]' } });
}
