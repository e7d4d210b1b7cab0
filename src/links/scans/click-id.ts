// Click IDs: a compact signed token carrying the scan, the link and the
// workspace, so a conversion can be attributed and checked offline, without
// waiting for the scan to reach any store. Layout (base64url, 84 characters):
//   version(1) | scanId(16) | linkId(16) | workspaceId(16) | HMAC-SHA256 truncated to 14 bytes (63 bytes in all)
import { createHmac, timingSafeEqual } from 'node:crypto';

const VERSION = 1;

/** The shape of every click ID: 84 base64url characters. */
export const CLICK_ID_FORMAT = /^[A-Za-z0-9_-]{84}$/;
const MAC_BYTES = 14;

export interface ClickIdClaims {
  scanId: string;
  linkId: string;
  workspaceId: string;
}

const uuidToBytes = (uuid: string): Buffer => Buffer.from(uuid.replace(/-/g, ''), 'hex');
const bytesToUuid = (b: Buffer): string => {
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

export class ClickIds {
  constructor(private readonly secret: string) {}

  private mac(body: Buffer): Buffer {
    return createHmac('sha256', this.secret).update(body).digest().subarray(0, MAC_BYTES);
  }

  sign(claims: ClickIdClaims): string {
    const body = Buffer.concat([Buffer.from([VERSION]), uuidToBytes(claims.scanId), uuidToBytes(claims.linkId), uuidToBytes(claims.workspaceId)]);
    return Buffer.concat([body, this.mac(body)]).toString('base64url');
  }

  /** The claims of a genuine click ID, or undefined for anything forged, truncated or malformed. */
  verify(token: string): ClickIdClaims | undefined {
    if (!CLICK_ID_FORMAT.test(token)) return undefined;
    const raw = Buffer.from(token, 'base64url');
    if (raw.length !== 1 + 48 + MAC_BYTES || raw[0] !== VERSION) return undefined;
    const body = raw.subarray(0, 49);
    if (!timingSafeEqual(raw.subarray(49), this.mac(body))) return undefined;
    return { scanId: bytesToUuid(body.subarray(1, 17)), linkId: bytesToUuid(body.subarray(17, 33)), workspaceId: bytesToUuid(body.subarray(33, 49)) };
  }
}
