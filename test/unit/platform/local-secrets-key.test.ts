// The development machine's secrets key that run.sh exports (src/platform/secrets/local-secrets-key.ts):
// made once, kept readable by its owner only, the same on every later run, a valid SECRETS_KEYS.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { LOCAL_KEY_FILE, localSecretsKeys } from '../../../src/platform/secrets/local-secrets-key.ts';
import { parseSecretsKeys } from '../../../src/platform/secrets/secrets-keys.ts';

it('is made once under the state folder, kept 0600, and handed out the same afterwards', () => {
  const state = mkdtempSync(join(tmpdir(), 'linkmail-state-'));
  const dir = join(state, 'nested');
  try {
    const first = localSecretsKeys(dir);
    expect(first).toMatch(/^local:[A-Za-z0-9+/]{43}=$/);
    expect(parseSecretsKeys(first).ok).toBe(true);
    expect(statSync(join(dir, LOCAL_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(localSecretsKeys(dir)).toBe(first);
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
});
