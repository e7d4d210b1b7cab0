// Scans a short link through the real redirect, as a phone's browser would.
import { freshIp } from '../ingress.ts';

export const DESKTOP_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

/** Follows nothing: the status, Location, click ID (svc_cid) and body of GET /:shortId from a fresh client IP. */
export async function scan(base: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/${path}`, { redirect: 'manual', headers: { 'user-agent': DESKTOP_UA, 'x-forwarded-for': freshIp(), ...headers } });
  const location = res.headers.get('location');
  const clickId = location ? (/[?&]svc_cid=([^#&]+)/.exec(location)?.[1] ?? null) : null;
  return { status: res.status, location, clickId, headers: res.headers, body: await res.text() };
}
