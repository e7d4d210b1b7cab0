// Structured JSON logging (pino). One root logger; modules take a child with their name.
import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

/**
 * Fields that hold a secret in clear wherever they appear (an opened webhook row, a claimed
 * delivery, nodemailer's dkim options, the configuration): no code logs them, and should one
 * ever log such an object, pino writes "[redacted]" instead.
 */
const SECRET_FIELDS = [
  'secret', 'secrets', 'previous_secret', 'signing_secret', 'privateKey', 'password',
  // The secret settings (config.ts marks them), should a configuration be logged.
  'SECRETS_KEYS', 'ADMIN_TOKEN', 'KAFKA_SASL_PASSWORD', 'SCHEMA_REGISTRY_PASSWORD', 'CLICKHOUSE_PASSWORD', 'DATABASE_URL', 'REDIS_URL', 'SMTP_URL', 'CLICK_ID_SECRET', 'MAIL_LINK_SECRET',
];
const REDACT = [...SECRET_FIELDS, ...SECRET_FIELDS.map((f) => `*.${f}`), '*.dkim.privateKey'];

/**
 * Under vitest a process's lines go through console, so that the runner shows them beside the test
 * that logged them, and only when that test fails; elsewhere pino writes to standard output itself.
 */
const destination: DestinationStream | undefined = process.env.VITEST ? { write: (line) => console.log(line.trimEnd()) } : undefined;

export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, name = 'linkmail'): Logger {
  const options = { name, level: config.LOG_LEVEL, redact: { paths: REDACT, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}
