// What a scan says about its visitor: device, OS and browser from the
// User-Agent (ua-parser-js), bots (crawler.ts), the referrer, the UTM parameters of
// the short-link request, and a daily-salted visitor hash instead of the IP.
import { createHash } from 'node:crypto';
import { UAParser } from 'ua-parser-js';
import { RecentCache } from '../../platform/recent-cache.ts';
import { isCrawler } from './crawler.ts';

export interface Visitor {
  device: string;
  os: string | null;
  browser: string | null;
  isBot: boolean;
  referrer: string | null;
  referrerHost: string | null;
  utmSource: string | null;
  utmMedium: string | null;
  utmCampaign: string | null;
  utmTerm: string | null;
  utmContent: string | null;
  visitorId: string;
}

const clip = (value: string | undefined | null, max: number): string | null => (value ? value.slice(0, max) : null);

function utm(query: URLSearchParams, name: string): string | null {
  return clip(query.get(name), 200);
}

interface Agent {
  device: string;
  os: string | null;
  browser: string | null;
  isBot: boolean;
}

// Parsing a User-Agent is the costliest part of a scan and the same few thousand strings recur.
const agents = new RecentCache<Agent>(5000);

function parseAgent(ua: string): Agent {
  const bot = isCrawler(ua);
  const parsed = new UAParser(ua).getResult();
  return { device: bot ? 'bot' : (parsed.device.type ?? 'desktop'), os: clip(parsed.os.name, 50), browser: clip(parsed.browser.name, 50), isBot: bot };
}

const visitorHash = (salt: string, day: string, ip: string, ua: string): string => createHash('sha256').update(`${salt}|${day}|${ip}|${ua}`).digest('base64url').slice(0, 22);
// One visitor scanning again the same day gets the same hash: remember recent ones (keys of
// ordinary length only, so the cache stays a few megabytes; the salt is the same for every key).
const visitorIds = new RecentCache<string>(20_000);

/** Milliseconds in a day. */
const DAY_MS = 86_400_000;
/** The UTC day last asked for: a shipper's scans are nearly all of one day. */
let knownDay = { start: 0, end: 0, text: '' };

/** The UTC day (YYYY-MM-DD) of a time, the visitor hash's daily salt (a Date and its ISO string per scan cost more than the rest of the hash's key). */
export function utcDayOf(timestamp: number): string {
  if (timestamp < knownDay.start || timestamp >= knownDay.end) {
    const start = Math.floor(timestamp / DAY_MS) * DAY_MS;
    knownDay = { start, end: start + DAY_MS, text: new Date(start).toISOString().slice(0, 10) };
  }
  return knownDay.text;
}

export function describeVisitor(input: { userAgent: string | undefined; referrer: string | undefined; query: URLSearchParams; ip: string; timestamp: number; salt: string }): Visitor {
  const ua = input.userAgent ?? '';
  const agent = agents.get(ua, parseAgent);
  let referrerHost: string | null = null;
  if (input.referrer) {
    try {
      referrerHost = new URL(input.referrer).hostname || null;
    } catch {
      referrerHost = null;
    }
  }
  const day = utcDayOf(input.timestamp);
  // Fields named, not spread: a spread costs several microseconds per scan in Node 20.
  return {
    device: agent.device,
    os: agent.os,
    browser: agent.browser,
    isBot: agent.isBot,
    referrer: clip(input.referrer, 1000),
    referrerHost: clip(referrerHost, 255),
    utmSource: utm(input.query, 'utm_source'),
    utmMedium: utm(input.query, 'utm_medium'),
    utmCampaign: utm(input.query, 'utm_campaign'),
    utmTerm: utm(input.query, 'utm_term'),
    utmContent: utm(input.query, 'utm_content'),
    visitorId: ua.length <= 512 ? visitorIds.get(`${day}|${input.ip}|${ua}`, () => visitorHash(input.salt, day, input.ip, ua)) : visitorHash(input.salt, day, input.ip, ua),
  };
}

/** Whether a scan with this User-Agent is a bot's (the scan's own `isBot`, from the same cache). */
export function isBotUserAgent(userAgent: string | undefined): boolean {
  return agents.get(userAgent ?? '', parseAgent).isBot;
}
