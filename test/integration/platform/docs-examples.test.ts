// Every request example in docs/*.md, run against a real ingress (over HTTP, and SMTP for the
// relay's example), so the docs cannot drift from what the service does. The README's code is
// checked by test/unit/links/readme-snippets.test.ts and run-supervision.test.ts.
//
// How docs/ write examples (the conventions this file reads):
// - A fenced block whose info string starts with `sh` (or `bash`, `shell`) or `http` is a request
//   example, and is run here in document order. Blocks of any other language (json, js, python,
//   yaml, none) are not requests and are not run.
// - A request example that is shown but not run says so with a second word in its info string:
//   ```sh no-run   (none today; GitHub renders the block by its first word alone).
// - A request example that must be refused says which status each of its requests answers with
//   `status=NNN` in its info string (```sh status=404); without it, every request must answer 2xx.
// - A `sh` block runs in bash (`set -euo pipefail`) with `curl` pointed at the test's ingress:
//   `localhost:3000` and `127.0.0.1:3000` reach it, every curl must answer 2xx, and a command that
//   fails fails the block (so does `swaks`, whose port 2587 reaches the ingress's SMTP relay).
// - An `http` block is `METHOD path`, header lines `Name: value`, a blank line, then the body; it is
//   sent as written and must answer 2xx.
// - Placeholders are shell variables, in `http` blocks too: `$KEY`, `$ADMIN_TOKEN`… — those of
//   VARIABLES below, made for the test; any other is an error (bash's `set -u`). `$OTHER_LINK_ID` is
//   a link of another workspace than `$KEY`'s.
// - A ```json response block right after a block of one request is that request's answer: the
//   real answer must have the same shape (the same keys of every object, recursively, the same
//   JSON types; arrays compared item by item). A second one in a row is the answer to the same
//   request sent again. Text between them is allowed; another block is not. An error body shown
//   (one with `error.code`) must also have the same `statusCode`, `name` and `error.code` values:
//   what the docs say a refusal is called is checked, not only its shape.
// - mail-api.md's statement of a tool error's body (`**Tool errors**` … `{"statusCode", …}`) names
//   the keys every MCP tool error has: checked on refusals of 403, 404 and 409.
// - Each document's MCP tool table (`| \`tool\` | arguments | result |`) names each tool's
//   arguments (backticked words outside parentheses): they must be the tool's, as tools/list says
//   for the product's key (links-api.md: a link key; mail-api.md: a mail key).
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, freshIp, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { hostSinks, scan as scanLink, scansStored } from '../../support/links/scans.ts';
import { eventually } from '../../support/env.ts';
import { wireLinks } from '../../../src/links/wiring.ts';
import { sql } from '../../../src/platform/clickhouse/literal.ts';
import { mailKey, organizationWithKey, verifiedDomain } from '../../support/mail/organizations.ts';
import { useOwnDatabases } from '../../support/own-databases.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DOCS = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`);

interface Block {
  doc: string;
  line: number;
  lang: string;
  flags: string[];
  text: string;
}

/** The fenced blocks of a markdown document, with the line each starts on. */
function fencedBlocks(doc: string, markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})\s*([^`]*)$/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    const [lang = '', ...flags] = open[2]!.trim().split(/\s+/).filter(Boolean);
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !(lines[j]!.startsWith(fence) && lines[j]!.trim() === fence)) body.push(lines[j++]!);
    blocks.push({ doc, line: i + 1, lang: lang.toLowerCase(), flags, text: body.join('\n') });
    i = j;
  }
  return blocks;
}

/** The status every request of the example must answer: `status=NNN` in its info string, else any 2xx. */
const expectedStatus = (b: Block): number | undefined => {
  const flag = b.flags.find((f) => f.startsWith('status='));
  return flag === undefined ? undefined : Number(flag.slice('status='.length));
};

/** The values an error body is known by (statusCode, name, error.code); undefined for any other answer. */
function errorNames(value: unknown): unknown {
  const body = value as { statusCode?: unknown; name?: unknown; error?: { code?: unknown } } | null;
  if (!body || typeof body !== 'object' || typeof body.error?.code !== 'string') return undefined;
  return { statusCode: body.statusCode, name: body.name, code: body.error.code };
}

const isRequest = (b: Block) => ['sh', 'bash', 'shell', 'http'].includes(b.lang) && !b.flags.includes('no-run');
const isResponse = (b: Block) => b.lang === 'json' && b.flags.includes('response');

/** The request examples of a document, each with the response blocks that follow it. */
function examples(doc: string): { request: Block; responses: Block[] }[] {
  const blocks = fencedBlocks(doc, readFileSync(join(ROOT, doc), 'utf8'));
  const found: { request: Block; responses: Block[] }[] = [];
  blocks.forEach((b, i) => {
    if (isResponse(b) && !(i > 0 && (isRequest(blocks[i - 1]!) || isResponse(blocks[i - 1]!)))) {
      throw new Error(`${doc}:${b.line}: a \`json response\` block must follow a request example (or another response)`);
    }
    if (!isRequest(b)) return;
    const responses: Block[] = [];
    for (let k = i + 1; k < blocks.length && isResponse(blocks[k]!); k++) responses.push(blocks[k]!);
    found.push({ request: b, responses });
  });
  return found;
}

/** The shape of a JSON value: its type, an object's keys and their shapes, an array's items'. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (value === null) return 'null';
  if (typeof value === 'object') return Object.fromEntries(Object.keys(value as object).sort().map((k) => [k, shape((value as Record<string, unknown>)[k])]));
  return typeof value;
}

let ingress: TestIngress;
let port: string;
let variables: Record<string, string>;
let mailOrganization: string;

// Its own databases: the examples use fixed names (the short ID spring-menu, the externalId order-1042).
useOwnDatabases();

beforeAll(async () => {
  ingress = await startIngress({ MAIL_RELAY_SMTP_PORT: '0' });
  port = new URL(ingress.url).port;
  const links = await workspaceWithKey(ingress.url);
  // A workspace of its own for the operator examples, which revoke a key and change the plan.
  const scratch = await workspaceWithKey(ingress.url);
  const link = await call(ingress.url, 'POST', '/api/v1/links', { key: links.key, body: { destination: 'https://example.com/landing' } });
  const otherLink = await call(ingress.url, 'POST', '/api/v1/links', { key: scratch.key, body: { destination: 'https://example.com/elsewhere' } });
  const scan = await fetch(`${ingress.url}/${link.body.shortId}`, { redirect: 'manual', headers: { 'x-forwarded-for': freshIp() } });
  const org = await organizationWithKey(ingress.url, { rate_limit: 1000 });
  mailOrganization = org.organizationId;
  const domain = await verifiedDomain(ingress.url, org.key);
  variables = {
    ADMIN_TOKEN,
    KEY: links.key,
    WS: scratch.workspaceId,
    KEY_ID: scratch.keyId,
    CLICK_ID: new URL(scan.headers.get('location')!).searchParams.get('svc_cid')!,
    OTHER_LINK_ID: otherLink.body.id,
    MAIL_KEY: org.key,
    MAIL_DOMAIN: domain.name,
  };
}, 120_000);

afterAll(async () => ingress?.close());

/** Runs a `sh` example; answers each curl's status and what the block printed. */
function runShell(text: string): Promise<{ code: number; statuses: number[]; stdout: string; stderr: string }> {
  const preamble = `
set -euo pipefail
curl() { command curl --silent --show-error --connect-to localhost:3000:127.0.0.1:${port} --connect-to 127.0.0.1:3000:127.0.0.1:${port} \\
  -H "x-forwarded-for: ${freshIp()}" --write-out '%{stderr}EXAMPLE-HTTP-STATUS %{http_code}\\n' "$@"; }
swaks() { local args=(); for a in "$@"; do [ "$a" = 2587 ] && a=${ingress.app.relaySmtpPort}; args+=("$a"); done; command swaks --silent 2 "\${args[@]}"; }
`;
  return new Promise((resolve) => {
    execFile('bash', ['-c', `${preamble}\n${text}`], { env: { PATH: process.env.PATH!, ...variables }, timeout: 60_000 }, (err, stdout, stderr) => {
      const statuses = [...stderr.matchAll(/^EXAMPLE-HTTP-STATUS (\d+)$/gm)].map((m) => Number(m[1]));
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, statuses, stdout, stderr: stderr.replace(/^EXAMPLE-HTTP-STATUS \d+\n/gm, '') });
    });
  });
}

/** Sends an `http` example: `METHOD path`, headers, a blank line, the body; `$NAME` from VARIABLES. */
async function runHttp(text: string): Promise<{ status: number; body: string }> {
  const filled = text.replace(/\$([A-Z_]+)/g, (_, name: string) => {
    if (!(name in variables)) throw new Error(`unknown variable $${name}`);
    return variables[name]!;
  });
  const [head, ...rest] = filled.split(/\n\s*\n/);
  const [requestLine, ...headerLines] = head!.split('\n');
  const [method, path] = requestLine!.trim().split(/\s+/);
  const headers: Record<string, string> = { 'x-forwarded-for': freshIp() };
  for (const line of headerLines) {
    const header = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(line.trim());
    if (!header) throw new Error(`not a header line: ${line}`);
    headers[header[1]!.toLowerCase()] = header[2]!;
  }
  const res = await fetch(`${ingress.url}${path}`, { method, headers, body: rest.length ? rest.join('\n\n') : undefined });
  return { status: res.status, body: await res.text() };
}

/** One run of a request example: its statuses and, for a block of one request, its answer. */
async function run(request: Block): Promise<{ statuses: number[]; body: string; failure?: string }> {
  if (request.lang === 'http') {
    const { status, body } = await runHttp(request.text);
    return { statuses: [status], body };
  }
  const result = await runShell(request.text);
  return { statuses: result.statuses, body: result.stdout, ...(result.code !== 0 ? { failure: `exit ${result.code}: ${result.stderr.slice(-2000)}` } : {}) };
}

describe('docs/ examples', () => {
  it('follow the conventions: every sh or http block is a request, and each response block follows one', () => {
    for (const doc of DOCS) {
      const all = fencedBlocks(doc, readFileSync(join(ROOT, doc), 'utf8'));
      for (const b of all.filter((x) => ['sh', 'bash', 'shell'].includes(x.lang) && !x.flags.includes('no-run'))) {
        expect(/(^|\n|\$\(|;|&&)\s*(curl|swaks)\s/.test(b.text), `${doc}:${b.line}: a sh block runs curl or swaks (else mark it \`\`\`sh no-run)`).toBe(true);
      }
      expect(() => examples(doc)).not.toThrow();
    }
    expect(DOCS.flatMap((doc) => examples(doc)).length).toBeGreaterThanOrEqual(4);
  });

  for (const doc of DOCS) {
    it(`${doc}: each request example answers 2xx, with the answer its response blocks show`, async () => {
      for (const { request, responses } of examples(doc)) {
        const where = `${doc}:${request.line}`;
        const first = await run(request);
        expect(first.failure, where).toBeUndefined();
        const requests = request.lang === 'http' ? 1 : [...request.text.matchAll(/(^|\s|\$\()curl\s/g)].length;
        expect(first.statuses.length, `${where}: one status per curl`).toBe(requests);
        const status = expectedStatus(request);
        if (status === undefined) expect(first.statuses.filter((s) => s < 200 || s > 299), `${where}: statuses ${first.statuses.join(', ')}`).toEqual([]);
        else expect(first.statuses, `${where}: every request answers ${status}`).toEqual(first.statuses.map(() => status));
        for (const [i, response] of responses.entries()) {
          const answer = i === 0 ? first : await run(request);
          expect(answer.statuses, `${where}: a response block needs a block of one request`).toHaveLength(1);
          let documented: unknown;
          expect(() => (documented = JSON.parse(response.text)), `${doc}:${response.line}: a response block is JSON`).not.toThrow();
          expect(shape(JSON.parse(answer.body)), `${doc}:${response.line}: the answer's shape (actual: ${answer.body.slice(0, 3000)})`).toEqual(shape(documented));
          if (errorNames(documented) !== undefined) expect(errorNames(JSON.parse(answer.body)), `${doc}:${response.line}: the refusal's status, name and code`).toEqual(errorNames(documented));
        }
      }
    }, 120_000);
  }

  // Statements of the docs that need the stored scans and the erasure runner, tried as written.
  it('links-api.md, Erasure: after the only converted scan of a link is erased, its funnel shows convertedScans 0 and conversionRate 0', async () => {
    const statement = 'after the only converted scan of a\n  link is erased, its funnel shows `convertedScans 0` and `conversionRate 0` for the scans left.';
    expect(readFileSync(join(ROOT, 'docs/links-api.md'), 'utf8')).toContain(statement);
    const stopSinks = await hostSinks(ingress.platform, { conversions: true });
    try {
      const ws = await workspaceWithKey(ingress.url);
      const link = await call(ingress.url, 'POST', '/api/v1/links', { key: ws.key, body: { destination: 'https://example.com/erased' } });
      const converted = (await scanLink(ingress.url, link.body.shortId)).clickId!;
      expect((await scanLink(ingress.url, link.body.shortId)).status).toBe(302);
      expect((await call(ingress.url, 'POST', '/api/v1/track', { key: ws.key, body: { clickId: converted, event: 'purchase' } })).status).toBe(201);
      const ch = ingress.platform.clickhouse;
      await eventually(() => scansStored(ch, ws.workspaceId, 2), 30_000);
      await eventually(async () => Number((await ch.rows<{ n: string }>(sql`SELECT count() AS n FROM conversions WHERE workspace_id = ${ws.workspaceId}`))[0]!.n) === 1, 30_000);
      const erasure = await call(ingress.url, 'POST', '/api/v1/privacy/erasures', { key: ws.key, body: { clickId: converted } });
      expect(erasure.status).toBe(202);
      // The scan sink's worker applies it within its interval; here its runner is run at once (with the docs' own example erasure).
      await wireLinks(ingress.platform, ingress.platform.config).scanPrivacy.runErasures();
      expect((await call(ingress.url, 'GET', `/api/v1/privacy/erasures/${erasure.body.id}`, { key: ws.key })).body.status).toBe('done');
      const funnel = await call(ingress.url, 'GET', `/api/v1/analytics/funnel?linkId=${link.body.id}`, { key: ws.key });
      expect(funnel.body).toMatchObject({ scans: 1, conversions: 1, convertedScans: 0, conversionRate: 0 });
    } finally {
      await stopSinks();
    }
  }, 120_000);

  it('docs/mail-api.md: a tool error\'s body has the keys it states, for refusals of 403, 404 and 409 too', async () => {
    const text = readFileSync(join(ROOT, 'docs/mail-api.md'), 'utf8');
    const stated = /\*\*Tool errors\*\*[^{]*`(\{[^`]*\})`/.exec(text);
    expect(stated, 'mail-api.md states the body of a tool error').not.toBeNull();
    // `{"statusCode", "name", "message", "error": {"code", …}}`: the top keys, and those of `error`.
    const inner = /"error": \{([^}]*)\}/.exec(stated![1]!)!;
    const keysOf = (list: string) => [...list.matchAll(/"([A-Za-z]+)"/g)].map((m) => m[1]!).sort();
    const top = keysOf(stated![1]!.replace(inner[0], '"error"'));
    const errorKeys = keysOf(inner[1]!);
    const sendKey = (await mailKey(ingress.url, mailOrganization, { kind: 'send' })).key;
    expect((await call(ingress.url, 'POST', '/api/v1/contacts', { key: variables.MAIL_KEY, body: { email: 'docs-409@example.net' } })).status).toBe(201);
    const tool = async (key: string, name: string, args: object) => {
      const res = await call(ingress.url, 'POST', '/api/mcp', {
        key, headers: { accept: 'application/json, text/event-stream' }, body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
      });
      expect(res.body.result.isError, name).toBe(true);
      return JSON.parse(res.body.result.content[0].text);
    };
    const refusals = [
      await tool(sendKey, 'add_contact', { email: 'docs-403@example.net' }),
      await tool(variables.MAIL_KEY!, 'get_email', { id: '00000000-0000-4000-8000-000000000000' }),
      await tool(variables.MAIL_KEY!, 'add_contact', { email: 'docs-409@example.net' }),
    ];
    expect(refusals.map((r) => r.statusCode)).toEqual([403, 404, 409]);
    for (const r of refusals) {
      expect(Object.keys(r).sort(), JSON.stringify(r)).toEqual(top);
      expect(Object.keys(r.error).sort(), JSON.stringify(r)).toEqual(errorKeys);
    }
  });

  // Each product's tools, listed with its key: the link tools in links-api.md, the mail tools in mail-api.md.
  for (const [doc, key] of [['docs/links-api.md', 'KEY'], ['docs/mail-api.md', 'MAIL_KEY']] as const) {
    it(`the MCP tool table of ${doc} names each tool's arguments, as tools/list gives them`, async () => {
      const listed = await call(ingress.url, 'POST', '/api/mcp', {
        key: variables[key],
        headers: { accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      });
      expect(listed.status).toBe(200);
      const tools = new Map<string, string[]>(listed.body.result.tools.map((t: { name: string; inputSchema: { properties?: object } }) => [t.name, Object.keys(t.inputSchema.properties ?? {}).sort()]));
      const text = readFileSync(join(ROOT, doc), 'utf8');
      const rows = [...text.matchAll(/^\| `([a-z_]+)` \| ([^|]*) \|/gm)].filter(([, name]) => tools.has(name!));
      const documented = new Map(rows.map(([, name, args]) => [name!, [...new Set([...args!.replace(/\([^)]*\)/g, '').matchAll(/`([A-Za-z_]+)(?:\[\])?`/g)].map((m) => m[1]!))].sort()]));
      expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(tools));
    });
  }
});

// Statements of docs/links-api.md's Import section that no 2xx example can show (issue 55), read
// from the document and tried against the ingress, so the text and the service cannot part.
describe('docs/links-api.md: the import statements', () => {
  const text = () => readFileSync(join(ROOT, 'docs/links-api.md'), 'utf8').replace(/\s+/g, ' ');
  const importCsv = (body: BodyInit, contentType = 'text/csv') =>
    fetch(`${ingress.url}/api/v1/links/import`, { method: 'POST', body, duplex: 'half', headers: { authorization: `Bearer ${variables.KEY}`, 'content-type': contentType, 'x-forwarded-for': freshIp() } } as RequestInit)
      .then(async (res) => ({ status: res.status, body: await res.json() }));

  it('any other content type, application/json too, answers the status and code the docs name', async () => {
    const [, status, code] = /any other content type \(`application\/json` too, whatever the body\) `(\d{3}) ([a-z_]+)`/.exec(text()) ?? [];
    expect(status, 'the statement is in the Import section').toBeDefined();
    for (const body of ['destination\nhttps://example.com/docs\n', '{"destination":"https://example.com/docs"}', '']) {
      const res = await importCsv(body, 'application/json');
      expect([res.status, res.body.error?.code]).toEqual([Number(status), code]);
    }
  });

  it('a line break inside a quoted cell counts as one line, a CRLF, LF or CR alike', async () => {
    expect(text()).toContain('a CRLF, LF or CR each as one line; the row\'s last line is given');
    // Line 2 a bad row, lines 3-5 one row of three lines (its last line 5), line 6 a bad row.
    const answers = [];
    for (const eol of ['\r\n', '\n', '\r']) {
      const csv = ['destination,title', 'not a url,', `ftp://example.com/docs,"three${eol}lines${eol}here"`, 'not a url either,'].join(eol);
      answers.push((await importCsv(csv)).body.errors);
    }
    const expected = [{ line: 2, code: 'validation_failed' }, { line: 5, code: 'invalid_url' }, { line: 6, code: 'validation_failed' }];
    expect(answers).toEqual([expected, expected, expected]);
  });

  it('a body that pauses longer than the documented stall timeout answers the documented 408 import_stalled (not 500), creating nothing', async () => {
    const [, code, seconds] = /\| 408 \| `([a-z_]+)` \| `POST \/api\/v1\/links\/import`: the body paused longer than `LINK_IMPORT_STALL_TIMEOUT_MS` \((\d+) s\)/.exec(text()) ?? [];
    expect(code, 'the 408 row of the error table').toBe('import_stalled');
    const shortId = `stall-${Math.random().toString(36).slice(2, 8)}`;
    const encoder = new TextEncoder();
    let step = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        step++;
        if (step === 1) return controller.enqueue(encoder.encode(`destination,shortId\nhttps://example.com/docs,${shortId}\n`));
        // Two seconds longer than the documented timeout, then the rest.
        await new Promise((r) => setTimeout(r, (Number(seconds) + 2) * 1000));
        controller.enqueue(encoder.encode('https://example.com/docs/2,\n'));
        controller.close();
      },
    });
    const res = await importCsv(body);
    expect([res.status, res.body.error?.code]).toEqual([408, code]);
    const found = await call(ingress.url, 'GET', `/api/v1/links?shortId=${shortId}`, { key: variables.KEY });
    expect(found.body.data).toEqual([]);
  }, 60_000);
});

