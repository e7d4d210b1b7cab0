// The root logger (src/platform/logger.ts) writes "[redacted]" for fields that hold secrets in
// clear, should an object carrying one (an opened webhook row, nodemailer's dkim options) be logged.
import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';

it('redacts secret fields (the secret settings too) at the top and one level down, and nodemailer\'s dkim key, leaving other fields alone', () => {
  const logger = new URL('../../../src/platform/logger.ts', import.meta.url).href;
  const code = `
    import { createLogger } from ${JSON.stringify(logger)};
    createLogger({ LOG_LEVEL: 'info' }).info({
      row: { id: 'e1', secret: 'whsec_current', previous_secret: 'whsec_previous' },
      delivery: { id: 'd1', secrets: ['whsec_a', 'whsec_b'] },
      message: { dkim: { domainName: 'example.com', privateKey: '-----BEGIN PRIVATE KEY-----' } },
      signing_secret: 'whsec_shown', SECRETS_KEYS: 'k1:AAAA',
      config: { KAFKA_SASL_PASSWORD: 'pw_kafka', SCHEMA_REGISTRY_PASSWORD: 'pw_registry', CLICKHOUSE_PASSWORD: 'pw_clickhouse', DATABASE_URL: 'postgres://u:pw_pg@db/x', REDIS_URL: 'rediss://u:pw_redis@r', ADMIN_TOKEN: 'pw_admin_token', KAFKA_SASL_USERNAME: 'linkmail' },
      sasl: { mechanism: 'plain', username: 'linkmail', password: 'pw_sasl' },
    }, 'an object with secrets');`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  const line = JSON.parse(run.stdout);
  expect(line).toMatchObject({
    row: { id: 'e1', secret: '[redacted]', previous_secret: '[redacted]' },
    delivery: { id: 'd1', secrets: '[redacted]' },
    message: { dkim: { domainName: 'example.com', privateKey: '[redacted]' } },
    signing_secret: '[redacted]', SECRETS_KEYS: '[redacted]',
    config: { KAFKA_SASL_PASSWORD: '[redacted]', DATABASE_URL: '[redacted]', REDIS_URL: '[redacted]', KAFKA_SASL_USERNAME: 'linkmail' },
    sasl: { username: 'linkmail', password: '[redacted]' },
  });
  expect(run.stdout).not.toMatch(/whsec_|BEGIN|AAAA|pw_/);
});
