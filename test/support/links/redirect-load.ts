// Redirects under a fault: `total` of them over the links, `perRound` at once every `everyMs`, each from
// a fresh client IP, counted by status as they answer. The count is what fault tests assert, so the
// loop sends all of it; its time bound only stops a loop gone wrong.
import { freshIp } from '../ingress.ts';

export interface RedirectLoad {
  /** The answers by status, once every redirect has answered (or the bound ran out). */
  done: Promise<Record<number, number>>;
  /** Redirects sent so far (whole rounds). */
  sent: () => number;
}

export function redirectLoad(baseUrl: string, shortIds: readonly string[], options: { total: number; perRound: number; everyMs: number; boundMs: number }): RedirectLoad {
  const statuses = new Map<number, number>();
  let sent = 0;
  const done = (async () => {
    const end = Date.now() + options.boundMs;
    while (sent < options.total && Date.now() < end) {
      const round = Array.from({ length: options.perRound }, async (_, i) => {
        const res = await fetch(`${baseUrl}/${shortIds[(sent + i) % shortIds.length]}`, { redirect: 'manual', headers: { 'x-forwarded-for': freshIp(), 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' } });
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      });
      await Promise.all([...round, new Promise((r) => setTimeout(r, options.everyMs))]);
      sent += options.perRound;
    }
    return Object.fromEntries(statuses);
  })();
  return { done, sent: () => sent };
}
