// What a failed first connection says about the settings: a wrong password, a certificate not
// trusted, TLS asked of a server that answers in plaintext. Such a failure does not go away by
// itself, so start-up stops with this message rather than retrying as if the service were down.
// Any other failure (refused, timed out: the service may be starting) is no such refusal.

/** Node's (OpenSSL's) codes for a certificate the client does not trust. */
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'CERT_UNTRUSTED', 'CERT_SIGNATURE_FAILURE',
  'CERT_REVOKED', 'ERR_TLS_CERT_ALTNAME_INVALID', 'HOSTNAME_MISMATCH',
]);

interface Failure {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  originalError?: unknown;
}

/** The error and the errors it wraps (kafkajs's originalError, a cause). */
function chain(err: unknown): Failure[] {
  const out: Failure[] = [];
  for (let e = err as Failure | undefined; e && typeof e === 'object' && out.length < 5; e = (e.cause ?? e.originalError) as Failure | undefined) out.push(e);
  return out;
}

/** A TLS failure any client may meet, described; undefined when it is none. */
export function tlsRefusal(err: unknown): string | undefined {
  for (const e of chain(err)) {
    const code = String(e.code ?? '');
    const message = String(e.message ?? '');
    if (UNTRUSTED.has(code) || /self[- ]signed certificate|unable to (verify|get local issuer)|certificate has expired|Hostname\/IP does not match/i.test(message)) {
      return `server certificate not trusted (${message.replace(/^Connection error: /, '')})`;
    }
    if (/WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|HTTP_REQUEST/i.test(code) || /wrong version number|packet length too long|http request/i.test(message)) {
      return 'TLS asked but the server answered plaintext';
    }
    if (/before secure TLS connection was established/i.test(message)) {
      return 'TLS asked but the server closed the connection during the handshake (is it TLS on this port?)';
    }
  }
  return undefined;
}

export function messageOf(err: unknown): string {
  return chain(err).map((e) => String(e.message ?? '')).find(Boolean) ?? String(err);
}
