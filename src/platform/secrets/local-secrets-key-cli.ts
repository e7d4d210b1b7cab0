// Run by infra/local/run.sh outside production:
//   node src/platform/secrets/local-secrets-key-cli.ts   prints the kept SECRETS_KEYS value (made on first use)
// kept under LOCAL_STATE_DIR, else .stack/.
import { localSecretsKeys } from './local-secrets-key.ts';

console.log(localSecretsKeys(process.env.LOCAL_STATE_DIR || '.stack'));
