// The SMTP relay: submission for clients that speak SMTP rather than HTTP, run by
// the ingress (smtp-server). What a client goes through, and the replies it gets:
//   STARTTLS     required before AUTH (530/538 otherwise); the certificate of relay-tls.ts
//   AUTH         PLAIN or LOGIN, user name `resend`, password a mail API key of a kind that
//                may send (535 5.7.8 otherwise); failures count against the same per-IP
//                allowance as the API's (454 4.7.0 once it is spent)
//   MAIL FROM    the key looked up again (a key revoked or changed since AUTH applies at once:
//                535 5.7.8), and one request of its per-second limit, as POST /emails (451 4.7.1)
//   RCPT TO      at most 50 recipients; the 51st is refused for good (552 5.5.3): a message of
//                more must be split into messages with Message-IDs of their own
//   DATA         at most MAX_MESSAGE_BYTES, read into memory no further (552 5.3.4);
//                the message, checked by the rules of POST /emails (554 5.6.0 naming the
//                problem); its From on a verified domain the key may use (550 5.7.1); no more
//                recipients than its organization's smallest daily allowance (552 5.5.3); stored
//                with the key `smtp:<key id>:<Message-ID>`, so a resubmission after a lost
//                reply is answered 250 with the first message's id and sends nothing again.
// Caps and suppressions then apply as for /emails (the store and the sender).
import { simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import type { AttemptGuard } from '../../platform/http/attempt-guard.ts';
import { limitKey } from '../../platform/http/client-ip.ts';
import { ApiError } from '../../platform/http/errors.ts';
import type { Logger } from '../../platform/logger.ts';
import type { MailKeyGrant, MailKeys } from '../accounts/mail-keys.ts';
import { fromDomainRefusal, kindAllows } from '../auth/permissions.ts';
import type { KeyRequestLimit } from '../auth/key-request-limit.ts';
import type { Domains } from '../domains/domains.ts';
import { MAX_RECIPIENTS } from '../emails/email-schemas.ts';
import type { MessageOutbox } from '../emails/message-outbox.ts';
import type { Messages } from '../emails/messages.ts';
import { MAX_ATTACHMENT_BYTES, overDailyLimit, prepareMessage } from '../emails/prepare-message.ts';
import type { RecipientLimits } from '../sending/recipient-limits.ts';
import { relayInput } from './relay-message.ts';
import type { RelayTls } from './relay-tls.ts';
import { listenSmtp, type ListeningSmtp } from '../smtp-listen.ts';

/** The user name of AUTH (the password is the API key), as Resend's own relay. */
export const RELAY_USER = 'resend';
/** Attachments of 40 MB, base64-encoded, with the message around them. */
const MAX_MESSAGE_BYTES = Math.ceil((MAX_ATTACHMENT_BYTES * 4) / 3) + 10 * 1024 * 1024;

export interface SmtpRelayDeps {
  keys: MailKeys;
  guard: AttemptGuard;
  limit: KeyRequestLimit;
  domains: Domains;
  messages: Messages;
  outbox: MessageOutbox;
  recipientLimits: RecipientLimits;
  log: Logger;
  ipv6LimitPrefixLength: number;
}

export type SmtpRelay = ListeningSmtp;

/** An SMTP reply for the callback of a command. */
const reply = (code: number, text: string) => Object.assign(new Error(text), { responseCode: code });

/** What AUTH left on the session: the key's grant, and the key itself to look it up again. */
interface SessionUser {
  grant: MailKeyGrant;
  token: string;
}
const userOf = (session: SMTPServerSession) => session.user as unknown as SessionUser;
/** Sessions at once: each may hold a message of MAX_MESSAGE_BYTES in memory. */
const MAX_CLIENTS = 50;

export async function startSmtpRelay(deps: SmtpRelayDeps, tls: RelayTls, host: string, port: number): Promise<SmtpRelay> {
  const log = deps.log.child({ component: 'mail-smtp-relay' });

  async function authenticate(username: string | undefined, password: string | null | undefined, session: SMTPServerSession): Promise<MailKeyGrant> {
    const subject = limitKey(session.remoteAddress, deps.ipv6LimitPrefixLength);
    const checked = await deps.guard.checkSubject(subject, async () => {
      if (username !== RELAY_USER || !password) return undefined;
      return deps.keys.authenticate(password);
    });
    if ('found' in checked) {
      if (!kindAllows(checked.found.kind, 'send')) throw reply(535, `5.7.8 A ${checked.found.kind} key cannot send; use a full or send key`);
      return checked.found;
    }
    if (checked.refused === 'limited') throw reply(454, '4.7.0 Too many failed authentication attempts from this address; try again later');
    throw reply(535, `5.7.8 Authentication failed: the user name is "${RELAY_USER}" and the password a mail API key (mk_live_…) of a full or send key`);
  }

  /** At each message: the key as it stands now (revoked, or its kind changed: refused), and one request of its limit. */
  async function checkSender(user: SessionUser): Promise<void> {
    const grant = await deps.keys.authenticate(user.token);
    if (!grant || !kindAllows(grant.kind, 'send')) throw reply(535, '5.7.8 The key was revoked or may no longer send; authenticate with another');
    user.grant = grant;
    const decision = await deps.limit.take(grant);
    if (!decision.allowed) throw reply(451, `4.7.1 More than ${decision.limit} requests in this second for this key; retry after 1 s`);
  }

  /** The message's bytes, or 552 once it passes the size (the rest is read and dropped, never kept). */
  function readMessage(stream: NodeJS.ReadableStream): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      stream.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes <= MAX_MESSAGE_BYTES) chunks.push(chunk);
      });
      stream.on('error', reject);
      stream.on('end', () => (bytes > MAX_MESSAGE_BYTES ? reject(reply(552, '5.3.4 Message too large')) : resolve(Buffer.concat(chunks))));
    });
  }

  async function take(stream: NodeJS.ReadableStream, session: SMTPServerSession): Promise<string> {
    const { grant } = userOf(session);
    const raw = await readMessage(stream);
    const parsed = await simpleParser(raw, { keepCidLinks: true }).catch(() => {
      throw reply(554, '5.6.0 The message cannot be parsed as MIME');
    });
    const recipients = session.envelope.rcptTo.map((r) => r.address);
    const made = relayInput(parsed, recipients, grant.keyId);
    if ('problem' in made) throw reply(554, `5.6.0 ${made.problem}`);
    let message;
    try {
      message = prepareMessage(made.input, made.idempotencyKey ?? undefined);
    } catch (err) {
      if (err instanceof ApiError) throw reply(554, `5.6.0 ${err.message}`);
      throw err;
    }
    const refusal = fromDomainRefusal(grant, message.from.domain, await deps.domains.verifiedNames(grant.organizationId));
    if (refusal) throw reply(550, `5.7.1 ${refusal.message}`);
    const tooMany = overDailyLimit(message, await deps.recipientLimits.of(grant.organizationId));
    if (tooMany) throw reply(552, `5.5.3 ${tooMany.message}`);
    const result = await deps.messages.store(grant.organizationId, grant.keyId, message);
    if (!result.ok) throw reply(554, '5.6.0 This Message-ID was already submitted with other content; give a new message a new Message-ID');
    const stored = result.stored;
    if (stored.unpublished) {
      const publishing = deps.outbox.publish([stored.id], stored.replayed);
      if (stored.replayed) await publishing;
    }
    return stored.id;
  }

  const server = new SMTPServer({
    name: 'linkmail-relay',
    key: tls.key,
    cert: tls.cert,
    authMethods: ['PLAIN', 'LOGIN'],
    // AUTH only after STARTTLS: a key never crosses the network in the clear.
    allowInsecureAuth: false,
    size: MAX_MESSAGE_BYTES,
    maxClients: MAX_CLIENTS,
    logger: false,
    onAuth(auth, session, callback) {
      authenticate(auth.username, auth.password, session).then(
        (grant) => callback(null, { user: { grant, token: auth.password! } satisfies SessionUser as never }),
        (err: Error) => callback(err),
      );
    },
    onMailFrom(_address, session, callback) {
      checkSender(userOf(session)).then(() => callback(), (err: Error) => callback(err));
    },
    onRcptTo(_address, session, callback) {
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) callback(reply(552, `5.5.3 At most ${MAX_RECIPIENTS} recipients per message; send a message of more as several, each with its own Message-ID`));
      else callback();
    },
    onData(stream, session, callback) {
      take(stream, session).then(
        (id) => callback(null, `2.0.0 Queued as ${id}`),
        (err: Error & { responseCode?: number }) => {
          if (err.responseCode) return callback(err);
          // Ours (Postgres away): a temporary refusal, so the client submits again.
          log.warn({ err }, 'relayed message could not be stored; asked the client to retry');
          callback(reply(451, '4.3.0 Try again later'));
        },
      );
    },
  });
  return listenSmtp(server, host, port, log, 'SMTP relay');
}
