// A DKIM key pair for a sending domain: RSA 2048 (RFC 8301's recommended size;
// every receiver verifies it), the private key as PKCS#8 PEM for signing, the
// public key as base64 DER for the DNS record's `p=`.
import { generateKeyPair, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const generate = promisify(generateKeyPair);

export interface DkimKeys {
  selector: string;
  privateKeyPem: string;
  publicKeyBase64: string;
}

export async function newDkimKeys(): Promise<DkimKeys> {
  const { privateKey, publicKey } = await generate('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'der' },
  });
  // A selector of its own per domain row, so two organizations claiming one name never share a record.
  return { selector: `lm${randomBytes(5).toString('hex')}`, privateKeyPem: privateKey, publicKeyBase64: (publicKey as Buffer).toString('base64') };
}
