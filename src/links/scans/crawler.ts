// Which scans are bots: crawlers and link-preview fetchers (Googlebot,
// Slackbot, facebookexternalhit…), the visits nobody made. isbot's list also
// names the generic HTTP client libraries (curl, python-requests, Node's
// fetch, axios, Go-http-client, okhttp, Java, Postman…); a scan by one of them
// is a person or a program of the workspace's own (a newcomer trying a link
// with curl, a kiosk app), so it counts as a scan. Such a client still is a
// bot when its User-Agent also names a crawler ("python-requests (SomeCrawler)").
import { isbot } from 'isbot';

/** A User-Agent that starts with a generic HTTP client library's name. */
const GENERIC_HTTP_CLIENT =
  /^(curl|wget|python-requests|python-urllib|python-httpx|httpx|aiohttp|node|node-fetch|undici|axios|got|go-http-client|okhttp|java|apache-httpclient|postmanruntime|insomnia|httpie|libwww-perl|ruby|faraday|guzzlehttp|deno|bun|reqwest|http\.rb|winhttp)(?=[\s/(;,]|$)/i;

/** Words only a crawler's or previewer's User-Agent carries. */
const CRAWLER_WORD = /bot|crawl|spider|scrap|preview/i;

/** True for crawlers and link-preview fetchers; false for browsers, apps and generic HTTP clients. */
export function isCrawler(userAgent: string): boolean {
  if (userAgent === '' || !isbot(userAgent)) return false;
  return !GENERIC_HTTP_CLIENT.test(userAgent) || CRAWLER_WORD.test(userAgent);
}
