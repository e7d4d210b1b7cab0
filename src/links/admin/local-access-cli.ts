// Run by infra/local/run.sh on a development machine (never in production):
//   node src/links/admin/local-access-cli.ts admin-token   prints the kept admin token (made on first use)
//   node src/links/admin/local-access-cli.ts bootstrap     waits until the ingress is ready, makes sure the
//                                                         kept API key works, prints both and a first curl
import { ensureLocalAccess, localAdminToken } from './local-access.ts';

const env = process.env;
/** Where the token and key are kept: .stack/ of the repository, or LOCAL_STATE_DIR (run.sh sets it). */
const STATE_DIR = env.LOCAL_STATE_DIR || '.stack';
const production = env.NODE_ENV === 'production';

/** Where this machine reaches the ingress (a wildcard listen address is reached on loopback). */
function ingressUrl(): string {
  const host = !env.HTTP_HOST || env.HTTP_HOST === '0.0.0.0' || env.HTTP_HOST === '::' ? '127.0.0.1' : env.HTTP_HOST;
  return `http://${host.includes(':') ? `[${host}]` : host}:${env.HTTP_PORT || '3000'}`;
}

async function waitUntilReady(baseUrl: string, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const ready = await fetch(`${baseUrl}/readyz`).then((r) => r.ok, () => false);
    if (ready) return;
    if (Date.now() > end) throw new Error(`the ingress at ${baseUrl} was not ready within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function bootstrap(): Promise<void> {
  const adminToken = env.ADMIN_TOKEN;
  if (!adminToken) throw new Error('ADMIN_TOKEN is not set (run.sh sets it from .stack/local-admin-token)');
  const baseUrl = ingressUrl();
  await waitUntilReady(baseUrl, 10 * 60_000);
  const access = await ensureLocalAccess({ baseUrl, adminToken, dir: STATE_DIR, nodeEnv: env.NODE_ENV });
  if (!access) return;
  const publicUrl = (env.PUBLIC_BASE_URL || baseUrl).replace(/\/$/, '');
  console.log(`
──────────────────────────────────────────────────────────────────────────────
 Ready at ${publicUrl}   (local development access, kept under ${STATE_DIR}/)
   API key (workspace "local", Enterprise): ${access.apiKey}${access.created ? "  (new)" : ""}
   admin token (/admin/v1):                 ${access.adminToken}
 Create a link, then open its shortUrl in a browser:
   curl -s -X POST ${publicUrl}/api/v1/links -H "authorization: Bearer $(cat ${access.keyFile})" \\
        -H 'content-type: application/json' -d '{"destination":"https://example.com/"}'
 API reference: ${publicUrl}/api/v1/openapi
──────────────────────────────────────────────────────────────────────────────
`);
}

const command = process.argv[2];
if (command === 'admin-token') {
  if (!production) console.log(localAdminToken(STATE_DIR));
} else if (command === 'bootstrap') {
  if (!production) {
    await bootstrap().catch((err: Error) => {
      console.error(`[local-access] ${err.message}`);
      process.exitCode = 1;
    });
  }
} else {
  console.error('usage: node src/links/admin/local-access-cli.ts admin-token|bootstrap');
  process.exitCode = 2;
}
