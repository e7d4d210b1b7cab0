// Which opens and clicks a machine made, so open and click rates count people.
// Such a fetch is still answered and kept as an event, flagged `automated`
// with its reason; the report does not count it as an open or a click.
//
// A fetch is automated when (first rule that holds):
//   head_request   it is a HEAD: mail clients and browsers GET; link checkers and scanners HEAD.
//   no_user_agent  it names no User-Agent: every mail client and browser sends one.
//   privacy_proxy  the User-Agent is exactly "Mozilla/5.0": Apple Mail Privacy Protection's
//                  proxy, which fetches every image when the message arrives, read or not.
//   bot            isbot recognises a crawler, previewer or scanner by its User-Agent.
//                  Not automated although isbot lists them: the mail providers' image
//                  proxies that fetch when the person opens the message (Gmail's
//                  GoogleImageProxy, Yahoo's YahooMailProxy), and generic HTTP client
//                  libraries (curl, Node's fetch…), a person's or the organization's own tool,
//                  as the link product counts them too.
//   arrival_click  a click less than ARRIVAL_CLICK_MS after the message was delivered: security
//                  gateways (Safe Links, Mimecast, Proofpoint…) follow every link on arrival,
//                  before a person could have read it. Opens have no such rule: a person may
//                  open at once, and the proxies that open on arrival are known by name above.
import { isbot } from 'isbot';

export type AutomatedReason = 'head_request' | 'no_user_agent' | 'privacy_proxy' | 'bot' | 'arrival_click';

/** A click this soon after delivery is a scanner's. */
export const ARRIVAL_CLICK_MS = 10_000;

/** Image proxies that fetch when the person opens the message (they stand for that person). */
const ON_OPEN_IMAGE_PROXY = /GoogleImageProxy|YahooMailProxy/i;

/** A User-Agent that starts with a generic HTTP client library's name. */
const GENERIC_HTTP_CLIENT =
  /^(curl|wget|python-requests|python-urllib|python-httpx|httpx|aiohttp|node|node-fetch|undici|axios|got|go-http-client|okhttp|java|apache-httpclient|postmanruntime|insomnia|httpie|libwww-perl|ruby|faraday|guzzlehttp|deno|bun|reqwest|http\.rb|winhttp)(?=[\s/(;,]|$)/i;

/** Words only a crawler's, scanner's or previewer's User-Agent carries. */
const CRAWLER_WORD = /bot|crawl|spider|scan|preview/i;

export interface TrackingFetch {
  kind: 'open' | 'click';
  method: string;
  userAgent: string | undefined;
  /** How long ago the message was delivered (ms), or null when no delivery is known. */
  sinceDeliveryMs: number | null;
}

/** Why this fetch is a machine's, or null for a person's. */
export function automatedReason(fetch: TrackingFetch): AutomatedReason | null {
  const userAgent = (fetch.userAgent ?? '').trim();
  if (fetch.method === 'HEAD') return 'head_request';
  if (userAgent === '') return 'no_user_agent';
  if (userAgent === 'Mozilla/5.0') return 'privacy_proxy';
  if (isbot(userAgent) && !ON_OPEN_IMAGE_PROXY.test(userAgent) && (!GENERIC_HTTP_CLIENT.test(userAgent) || CRAWLER_WORD.test(userAgent))) return 'bot';
  if (fetch.kind === 'click' && fetch.sinceDeliveryMs !== null && fetch.sinceDeliveryMs < ARRIVAL_CLICK_MS) return 'arrival_click';
  return null;
}
