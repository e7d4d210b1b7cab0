// The middle step of a secrets key rotation (docs/operations.md, "The secrets key"):
// seals every stored secret again under the first key of SECRETS_KEYS, bound to its
// row (v2): it also upgrades values sealed before that binding (v1).
//
//   SECRETS_KEYS=new:…,old:… node src/reseal-secrets.ts
//
// Safe while the service runs: each row is rewritten by a statement of its own,
// only if it still holds the value read (src/platform/secrets/sealed-columns.ts),
// and every value opens under either key meanwhile. It exits 1 when values under
// another key are left (written meanwhile by a process whose first key is still the
// old one): restart those with the new SECRETS_KEYS and run it again before the old
// key is removed. An entry point like src/main.ts, as it knows the products' columns.
import pg from 'pg';
import { ConfigError, loadConfig } from './platform/config.ts';
import { resealStoredSecrets } from './platform/secrets/sealed-columns.ts';
import { SealedSecrets } from './platform/secrets/sealed-secrets.ts';
import { secretsKeysOf } from './platform/secrets/secrets-keys.ts';
import { serviceSealedColumns } from './service.ts';

let config;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(2);
}
const secrets = new SealedSecrets(secretsKeysOf(config));
const db = new pg.Client({ connectionString: config.DATABASE_URL });
try {
  await db.connect();
  const results = await resealStoredSecrets(db, secrets, serviceSealedColumns);
  for (const { column, resealed, left } of results) {
    console.log(`${column}: ${resealed} resealed under key "${secrets.currentKeyId}"${left > 0 ? `, ${left} still under another key or v1` : ''}`);
  }
  const left = results.reduce((sum, r) => sum + r.left, 0);
  if (left > 0) {
    console.error(`${left} value(s) were written under another key or as v1 while this ran: restart every process with this release and SECRETS_KEYS starting with "${secrets.currentKeyId}", then run this again before removing the old key`);
    process.exitCode = 1;
  } else {
    console.log(`every stored secret is sealed under key "${secrets.currentKeyId}"; keys after it in SECRETS_KEYS may be removed`);
  }
} catch (err) {
  console.error(`reseal stopped: ${(err as Error).message}`);
  process.exitCode = 1;
} finally {
  await db.end().catch(() => {});
}
