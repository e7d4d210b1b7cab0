// The official MCP Inspector's CLI lists the mail tools of a real ingress with a
// full mail key and checks their schemas for portability (some clients accept
// nullability only as anyOf with {type:'null'}); any warning fails the test.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { startIngress, type TestIngress } from '../../support/ingress.ts';
import { organizationWithKey } from '../../support/mail/organizations.ts';

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const INSPECTOR = join(dirname(require.resolve('@modelcontextprotocol/inspector/package.json')), 'clients/launcher/build/index.js');

let ingress: TestIngress;

beforeAll(async () => {
  ingress = await startIngress();
}, 60_000);

afterAll(async () => {
  await ingress?.close();
});

it('lists the mail tools with no schema portability warning', async () => {
  const { key } = await organizationWithKey(ingress.url);
  const args = [INSPECTOR, '--cli', '--transport', 'http', '--header', `Authorization: Bearer ${key}`, '--method', 'tools/list', '--strict', `${ingress.url}/api/mcp`];
  const { stdout, stderr } = await run(process.execPath, args, { timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } }).catch((err) => {
    throw new Error(`inspector exited ${err.code}:\n${err.stderr}\n${err.stdout}`);
  });
  const listing = JSON.parse(stdout) as { tools: { name: string }[] };
  expect(listing.tools.map((t) => t.name)).toEqual([
    'send_email', 'get_email', 'list_emails', 'cancel_email', 'add_contact', 'list_contacts', 'update_contact', 'list_topics', 'list_segments',
    'create_broadcast', 'send_broadcast', 'get_broadcast', 'get_broadcast_report', 'add_suppression',
  ]);
  expect(stderr).not.toMatch(/warning|portability|error/i);
}, 90_000);
