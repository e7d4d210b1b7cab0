// SECRETS_KEYS (src/platform/secrets/secrets-keys.ts): its format, the development key when NODE_ENV
// is development or test (and said at start), and the start-up refusal otherwise; messages never show key material.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/platform/config.ts';
import { DEVELOPMENT_KEY_ID, parseSecretsKeys, secretsKeysOf, secretsKeysProblems } from '../../../src/platform/secrets/secrets-keys.ts';
import { loadServiceConfig } from '../../../src/service.ts';
import { startTs } from '../../support/processes.ts';

const b64 = () => randomBytes(32).toString('base64');
/** What production needs besides SECRETS_KEYS. */
const PRODUCTION = { NODE_ENV: 'production', CLICK_ID_SECRET: 'c'.repeat(32), MAIL_LINK_SECRET: 'm'.repeat(32) };

describe('SECRETS_KEYS', () => {
  it('reads several keys, the first one sealing; base64 or base64url', () => {
    const [a, b] = [randomBytes(32), randomBytes(32)];
    const parsed = parseSecretsKeys(` new:${a.toString('base64')} , old.2025_x-1:${b.toString('base64url')}`);
    expect(parsed).toEqual({ ok: true, keys: [{ id: 'new', key: a }, { id: 'old.2025_x-1', key: b }] });
  });

  it('names each bad item by position and id, never by its key material', () => {
    const short = randomBytes(16).toString('base64');
    const parsed = parseSecretsKeys(`k1:${short},${b64()},k1:${b64()},k2:${b64()},k2:${b64()},k3:not*base64`);
    expect(parsed.ok).toBe(false);
    const problems = (parsed as { problems: string[] }).problems;
    expect(problems).toEqual([
      'SECRETS_KEYS item 1 ("k1"): the key is not base64 of 32 bytes (openssl rand -base64 32)',
      expect.stringMatching(/^SECRETS_KEYS item 2: expected <key id>:<base64 of 32 bytes>/),
      'SECRETS_KEYS item 5: key id "k2" is given twice',
      'SECRETS_KEYS item 6 ("k3"): the key is not base64 of 32 bytes (openssl rand -base64 32)',
    ]);
    expect(problems.join('\n')).not.toContain(short);
  });

  it('a bad value stops start-up naming SECRETS_KEYS without printing it', () => {
    const secret = randomBytes(20).toString('base64');
    try {
      loadConfig({ SECRETS_KEYS: `k1:${secret}` });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toContain('SECRETS_KEYS item 1 ("k1")');
      expect((err as Error).message).not.toContain(secret);
    }
  });

  it('outside production, unset, is the development key; set, it is what is given', () => {
    expect(loadConfig({}).SECRETS_KEYS).toBe('');
    expect(secretsKeysOf({ NODE_ENV: 'development', SECRETS_KEYS: '' }).map((k) => k.id)).toEqual([DEVELOPMENT_KEY_ID]);
    expect(secretsKeysOf({ NODE_ENV: 'test', SECRETS_KEYS: `a:${b64()},b:${b64()}` }).map((k) => k.id)).toEqual(['a', 'b']);
  });

  it('production refuses to start without it, or with the development key', () => {
    expect(() => loadServiceConfig(PRODUCTION)).toThrow(/SECRETS_KEYS must be set in production/);
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/SECRETS_KEYS must be set in production/);
    const development = secretsKeysOf({ NODE_ENV: 'development', SECRETS_KEYS: '' })[0]!;
    expect(() => loadServiceConfig({ ...PRODUCTION, SECRETS_KEYS: `prod:${development.key.toString('base64')}` })).toThrow(/must not hold the development key/);
    expect(() => loadServiceConfig({ ...PRODUCTION, SECRETS_KEYS: `${DEVELOPMENT_KEY_ID}:${b64()}` })).toThrow(/must not hold the development key/);
    expect(() => secretsKeysOf({ NODE_ENV: 'production', SECRETS_KEYS: '' })).toThrow(/must be set in production/);
    expect(loadServiceConfig({ ...PRODUCTION, SECRETS_KEYS: `prod:${b64()}` }).SECRETS_KEYS).toMatch(/^prod:/);
  });

  it('the development key only when NODE_ENV is development or test: any other NODE_ENV without SECRETS_KEYS is a start-up error saying why', () => {
    expect(() => secretsKeysOf({ NODE_ENV: 'staging', SECRETS_KEYS: '' })).toThrow('SECRETS_KEYS must be set in NODE_ENV=staging: the public development key is used only when NODE_ENV is development or test');
    const development = secretsKeysOf({ NODE_ENV: 'test', SECRETS_KEYS: '' })[0]!;
    expect(secretsKeysProblems({ NODE_ENV: 'staging', SECRETS_KEYS: `x:${development.key.toString('base64')}` })).toEqual(['SECRETS_KEYS must not hold the development key in NODE_ENV=staging']);
    expect(secretsKeysProblems({ NODE_ENV: 'staging', SECRETS_KEYS: `x:${b64()}` })).toEqual([]);
    // The configuration takes no other NODE_ENV, and says which it takes.
    expect(() => loadConfig({ NODE_ENV: 'staging' })).toThrow('NODE_ENV="staging": expected one of development, test, production');
    expect(() => loadConfig({ NODE_ENV: 'staging', SECRETS_KEYS: `x:${b64()}` })).toThrow(/expected one of development, test, production/);
  });

  it('with NODE_ENV development and no SECRETS_KEYS, a process says once at start that it seals with the public development key', async () => {
    // No store answers at this address: the process says it, then stops at the migrations.
    const ingress = startTs('src/main.ts', [], { NODE_ENV: 'development', SECRETS_KEYS: '', LOG_LEVEL: 'info', DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    await ingress.exited;
    const said = ingress.output().split('\n').filter((line) => line.includes('sealed with the public development key'));
    expect(said).toHaveLength(1);
    expect(JSON.parse(said[0]!)).toMatchObject({ level: 40, NODE_ENV: 'development' });
  });

  it('the ingress in production without SECRETS_KEYS exits at start with the reason (status 2), before touching any store', async () => {
    // Blank is unset; no store answers at this address, so getting past the configuration would fail otherwise.
    const ingress = startTs('src/main.ts', [], { ...PRODUCTION, SECRETS_KEYS: '', DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    expect((await ingress.exited).code).toBe(2);
    expect(ingress.output()).toContain('SECRETS_KEYS must be set in production');
  });
});
