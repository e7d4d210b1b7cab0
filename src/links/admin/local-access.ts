// A newcomer's way in on a development machine: an admin token generated once,
// and an Enterprise workspace with an API key made once through the admin API,
// both kept in the local state folder (.stack/) so every later run hands out the
// same ones. A kept key that no longer works (the database was reset, the key
// revoked) is replaced. Never in production: there it does nothing at all.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const LOCAL_WORKSPACE_NAME = 'local';
const TOKEN_FILE = 'local-admin-token';
const KEY_FILE = 'local-api-key';

export interface LocalAccess {
  adminToken: string;
  apiKey: string;
  workspaceId: string;
  /** False when the kept key still worked. */
  created: boolean;
  keyFile: string;
  tokenFile: string;
}

const readKept = (file: string): string | undefined => (existsSync(file) ? readFileSync(file, 'utf8').trim() || undefined : undefined);

/** Written readable by its owner only: these are credentials. */
function keep(dir: string, name: string, value: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), `${value}\n`, { mode: 0o600 });
}

/** The kept admin token, made on first use: 48 hex characters (ADMIN_TOKEN wants 16 or more, no spaces). */
export function localAdminToken(dir: string): string {
  const kept = readKept(join(dir, TOKEN_FILE));
  if (kept) return kept;
  const token = randomBytes(24).toString('hex');
  keep(dir, TOKEN_FILE, token);
  return token;
}

async function request(baseUrl: string, method: string, path: string, bearer: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function expectStatus(what: string, status: number, res: { status: number; body: any }): Promise<any> {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * Makes sure the kept API key works, making the workspace and the key when it
 * does not; `undefined` (and nothing read, written or sent) in production.
 */
export async function ensureLocalAccess(options: { baseUrl: string; adminToken: string; dir: string; nodeEnv: string | undefined }): Promise<LocalAccess | undefined> {
  if (options.nodeEnv === 'production') return undefined;
  const { baseUrl, adminToken, dir } = options;
  const keyFile = join(dir, KEY_FILE);
  const tokenFile = join(dir, TOKEN_FILE);

  const workspaceId = await localWorkspace(baseUrl, adminToken);
  const kept = readKept(keyFile);
  // Listing one link proves the key and its plan (any other answer: make a new key).
  if (kept && (await request(baseUrl, 'GET', '/api/v1/links?limit=1', kept)).status === 200) {
    return { adminToken, apiKey: kept, workspaceId, created: false, keyFile, tokenFile };
  }
  const issued = await expectStatus('issuing the local API key', 201, await request(baseUrl, 'POST', `/admin/v1/workspaces/${workspaceId}/keys`, adminToken, { name: 'local' }));
  keep(dir, KEY_FILE, issued.key);
  return { adminToken, apiKey: issued.key, workspaceId, created: true, keyFile, tokenFile };
}

/** The workspace named "local", made (Enterprise) if missing, moved to Enterprise if it is on another plan. */
async function localWorkspace(baseUrl: string, adminToken: string): Promise<string> {
  let found: { id: string; name: string; plan: string } | undefined;
  // The list is paged: walk it to the end (or to the local workspace).
  for (let cursor: string | null = ''; !found && cursor !== null; ) {
    const path = `/admin/v1/workspaces?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const list = await expectStatus('listing workspaces (is ADMIN_TOKEN the kept one?)', 200, await request(baseUrl, 'GET', path, adminToken));
    found = (list.data as { id: string; name: string; plan: string }[]).find((w) => w.name === LOCAL_WORKSPACE_NAME);
    cursor = list.nextCursor;
  }
  if (!found) {
    const made = await expectStatus('creating the local workspace', 201, await request(baseUrl, 'POST', '/admin/v1/workspaces', adminToken, { name: LOCAL_WORKSPACE_NAME, plan: 'enterprise' }));
    return made.id;
  }
  if (found.plan !== 'enterprise') {
    await expectStatus('moving the local workspace to Enterprise', 200, await request(baseUrl, 'PATCH', `/admin/v1/workspaces/${found.id}`, adminToken, { plan: 'enterprise' }));
  }
  return found.id;
}
