// SMTP sink for local runs and tests: accepts every message, stores it, serves it over HTTP.
//
//   node infra/local/smtp-sink.mjs        (from the repo root; needs node_modules from npm ci)
//
// SMTP  127.0.0.1:2525 (SMTP_SINK_PORT)       no TLS, AUTH optional and any credentials accepted
// HTTP  127.0.0.1:2580 (SMTP_SINK_HTTP_PORT)
//   GET    /healthz                 {"status":"ok","messages":n}
//   GET    /messages[?to=addr]      JSON array of summaries, oldest first / newest last
//   GET    /messages/:id            one summary
//   GET    /messages/:id/raw        the raw RFC 822 message (.eml)
//   DELETE /messages                removes all stored messages
// Store: SMTP_SINK_DIR (default <repo>/.stack/smtp): <id>.eml + <id>.json per message; reloaded on start.
import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';
import http from 'node:http';
import fs from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const HOST = process.env.SMTP_SINK_HOST || '127.0.0.1';
const SMTP_PORT = Number(process.env.SMTP_SINK_PORT || 2525);
const HTTP_PORT = Number(process.env.SMTP_SINK_HTTP_PORT || 2580);
const DIR = path.resolve(process.env.SMTP_SINK_DIR || path.join(repoRoot, '.stack', 'smtp'));
const MAX_SIZE = 50 * 1024 * 1024;
const ID_RE = /^[A-Za-z0-9_-]+$/;

/** In-memory index of summaries, kept in arrival order (newest last). */
let messages = [];
let seq = 0;

const log = (...args) => console.log(new Date().toISOString(), '[smtp-sink]', ...args);

async function loadExisting() {
  await fs.mkdir(DIR, { recursive: true });
  const files = (await fs.readdir(DIR)).filter((f) => f.endsWith('.json'));
  const loaded = [];
  for (const f of files) {
    try {
      loaded.push(JSON.parse(await fs.readFile(path.join(DIR, f), 'utf8')));
    } catch (e) {
      log(`skipping unreadable ${f}: ${e.message}`);
    }
  }
  // Ids start with a zero-padded timestamp + sequence, so they sort in arrival order.
  messages = loaded.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function newId() {
  seq = (seq + 1) % 1_000_000;
  return `${String(Date.now()).padStart(14, '0')}-${String(seq).padStart(6, '0')}-${crypto.randomBytes(3).toString('hex')}`;
}

/** Header lines as a plain object: lower-case name -> unfolded value (array when repeated). */
function headersObject(headerLines) {
  const out = {};
  for (const { key, line } of headerLines || []) {
    const idx = line.indexOf(':');
    const value = (idx >= 0 ? line.slice(idx + 1) : line).replace(/\r?\n[ \t]+/g, ' ').trim();
    if (key in out) out[key] = [].concat(out[key], value);
    else out[key] = value;
  }
  return out;
}

const addressList = (a) => (a ? [].concat(a).flatMap((x) => x.value || []).map((v) => v.address).filter(Boolean) : []);

async function store(raw, session) {
  const parsed = await simpleParser(raw);
  const id = newId();
  const summary = {
    id,
    receivedAt: new Date().toISOString(),
    envelope: {
      from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
      to: session.envelope.rcptTo.map((r) => r.address),
    },
    messageId: parsed.messageId || null,
    from: addressList(parsed.from),
    to: addressList(parsed.to),
    cc: addressList(parsed.cc),
    subject: parsed.subject ?? null,
    headers: headersObject(parsed.headerLines),
    text: parsed.text ?? null,
    html: parsed.html || null,
    attachments: (parsed.attachments || []).map((a) => ({
      filename: a.filename || null,
      contentType: a.contentType,
      size: a.size,
    })),
    size: raw.length,
  };
  // Write the raw file first; the JSON's presence marks a complete message.
  await fs.writeFile(path.join(DIR, `${id}.eml`), raw);
  await fs.writeFile(path.join(DIR, `${id}.json`), JSON.stringify(summary, null, 2));
  messages.push(summary);
  return summary;
}

const smtp = new SMTPServer({
  name: 'smtp-sink.local',
  banner: 'smtp-sink ready',
  secure: false,
  disabledCommands: ['STARTTLS'], // plain text only; clients must not be offered TLS
  hideSTARTTLS: true,
  authOptional: true,
  allowInsecureAuth: true,
  authMethods: ['PLAIN', 'LOGIN'],
  size: MAX_SIZE,
  logger: false,
  // Accept any credentials, so relays configured with auth also work against the sink.
  onAuth(auth, _session, cb) {
    cb(null, { user: auth.username || 'anonymous' });
  },
  onData(stream, session, cb) {
    const chunks = [];
    stream.on('data', (c) => chunks.push(c));
    stream.on('error', cb);
    stream.on('end', () => {
      if (stream.sizeExceeded) {
        const e = new Error('Message exceeds fixed maximum message size');
        e.responseCode = 552;
        return cb(e);
      }
      // Reply 250 only after the message is on disk and listed, so a test that awaits the
      // send can immediately read it back over HTTP.
      store(Buffer.concat(chunks), session).then(
        (m) => {
          log(`stored ${m.id} from=${m.envelope.from} to=${m.envelope.to.join(',')} subject=${JSON.stringify(m.subject)}`);
          cb(null, `Message queued as ${m.id}`);
        },
        (e) => {
          log(`failed to store message: ${e.stack || e}`);
          cb(e);
        },
      );
    });
  },
});
smtp.on('error', (e) => log(`smtp error: ${e.message}`));

function send(res, status, body, type = 'application/json') {
  const data = type === 'application/json' ? JSON.stringify(body) : body;
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(data);
}

async function handle(req, res) {
  const url = new URL(req.url, `http://${HOST}`);
  const parts = url.pathname.split('/').filter(Boolean);
  if (req.method === 'GET' && url.pathname === '/healthz') {
    return send(res, 200, { status: 'ok', messages: messages.length });
  }
  if (parts[0] !== 'messages' || parts.length > 3) return send(res, 404, { error: 'not found' });
  if (parts.length === 1) {
    if (req.method === 'GET') {
      const to = url.searchParams.get('to');
      if (!to) return send(res, 200, messages);
      const want = to.toLowerCase();
      return send(
        res,
        200,
        messages.filter((m) => [...m.envelope.to, ...m.to, ...m.cc].some((a) => a.toLowerCase() === want)),
      );
    }
    if (req.method === 'DELETE') {
      const n = messages.length;
      messages = [];
      for (const f of await fs.readdir(DIR)) {
        if (f.endsWith('.eml') || f.endsWith('.json')) await fs.rm(path.join(DIR, f), { force: true });
      }
      return send(res, 200, { deleted: n });
    }
    return send(res, 405, { error: 'method not allowed' });
  }
  const id = parts[1];
  const m = ID_RE.test(id) && messages.find((x) => x.id === id);
  if (!m) return send(res, 404, { error: 'no such message' });
  if (req.method !== 'GET') return send(res, 405, { error: 'method not allowed' });
  if (parts.length === 2) return send(res, 200, m);
  if (parts[2] === 'raw') return send(res, 200, await fs.readFile(path.join(DIR, `${id}.eml`)), 'message/rfc822');
  return send(res, 404, { error: 'not found' });
}

const api = http.createServer((req, res) => {
  handle(req, res).catch((e) => {
    log(`http error: ${e.stack || e}`);
    if (!res.headersSent) send(res, 500, { error: String(e.message || e) });
    else res.end();
  });
});

function listen(server, port, what) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, HOST, () => {
      log(`${what} listening on ${HOST}:${port}`);
      resolve();
    });
  });
}

function shutdown(signal) {
  log(`${signal}: shutting down`);
  api.close();
  smtp.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 3000).unref();
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));

try {
  await loadExisting();
  await listen(smtp, SMTP_PORT, 'smtp');
  await listen(api, HTTP_PORT, 'http');
  log(`store ${DIR} (${messages.length} messages)`);
} catch (e) {
  log(`failed to start: ${e.stack || e}`);
  process.exit(1);
}
