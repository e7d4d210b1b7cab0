// The OpenAPI document as an API consumer's linter sees it: Redocly CLI's
// `recommended` rules, run offline on the document a real ingress serves,
// must report nothing at all (no error and no warning).
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIngress, type TestIngress } from '../../support/ingress.ts';

const run = promisify(execFile);
const redoclyCli = join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin', 'cli.js');

/** No telemetry, no update check, no announcements: the linter must work without a network. */
const OFFLINE_ENV = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true', NO_COLOR: '1' };

interface LintProblem {
  ruleId: string;
  severity: string;
  message: string;
  location: { pointer?: string }[];
}

let ingress: TestIngress;
let dir: string;

beforeAll(async () => {
  ingress = await startIngress();
  dir = await mkdtemp(join(tmpdir(), 'openapi-lint-'));
});
afterAll(async () => {
  await ingress?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the OpenAPI document under redocly lint (recommended)', () => {
  it('has no errors and no warnings', async () => {
    const doc = await (await fetch(`${ingress.url}/api/v1/openapi`)).json();
    const file = join(dir, 'openapi.json');
    const config = join(dir, 'redocly.yaml');
    await writeFile(file, JSON.stringify(doc, null, 2));
    await writeFile(config, 'extends:\n  - recommended\n');
    // Known exceptions: a mail click link's only success is its redirect to the destination, and the
    // preferences form's is its redirect back to the page (post/redirect/get), as are the analytics pages' forms
    // (a share's password, the workspace's sign-in: post/redirect/get with the session cookie). A link's public QR code
    // (/{shortId}/qr) looks ambiguous next to /emails/{id}, but a short ID never takes a root path the
    // service serves (reserved-paths.ts), so /emails/qr is always the mail product's. The paths of
    // Resend's SDK the mail product does not offer answer only 404 not_found (resend-not-offered-routes.ts; /emails/metrics
    // and /emails/receiving in email-routes.ts).
    const notOffered = ['~1automations/get', '~1automations/post', '~1events/get', '~1logs/get', '~1usage/get', '~1oauth~1grants/get', '~1oauth~1grants~1{id}/delete', '~1emails~1metrics/get', '~1emails~1receiving/get'].map((p) => `    - '#/paths/${p}/responses'\n`).join('');
    await writeFile(join(dir, '.redocly.lint-ignore.yaml'), "openapi.json:\n  operation-2xx-response:\n    - '#/paths/~1m~1c~1{token}/get/responses'\n    - '#/paths/~1m~1u~1{token}~1preferences/post/responses'\n    - '#/paths/~1analytics/post/responses'\n    - '#/paths/~1analytics~1{shareId}/post/responses'\n" + notOffered + "  no-ambiguous-paths:\n    - '#/paths/~1{shortId}~1qr'\n");
    // Exit code 1 means errors; the JSON report on stdout lists warnings as well.
    const result = await run(process.execPath, [redoclyCli, 'lint', file, '--config', config, '--format', 'json'], { env: OFFLINE_ENV, cwd: dir, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 })
      .catch((err: { stdout?: string; stderr?: string; code?: number }) => ({ stdout: err.stdout ?? '', stderr: `${err.stderr ?? ''} (exit ${String(err.code)})` }));
    let problems: LintProblem[];
    try {
      problems = (JSON.parse(result.stdout) as { problems: LintProblem[] }).problems;
    } catch {
      throw new Error(`redocly lint did not report JSON:\n${result.stdout}\n${result.stderr}`);
    }
    const report = problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location.map((l) => l.pointer).join(', ')}: ${p.message}`).join('\n');
    expect(problems.length, `redocly lint found ${problems.length} problem(s):\n${report}`).toBe(0);
  }, 150_000); // longer than the child process's own 120 s timeout, so that one reports
});
