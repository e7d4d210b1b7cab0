// The bot rule over real User-Agent strings: crawlers and link-preview fetchers
// are bots; browsers, in-app browsers and generic HTTP clients are not.
import { describe, expect, it } from 'vitest';
import { isCrawler } from '../../../src/links/scans/crawler.ts';

const CRAWLERS = [
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Googlebot/2.1 (+http://www.google.com/bot.html)',
  'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
  'Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)',
  'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
  'Twitterbot/1.0',
  'WhatsApp/2.23.20.0',
  'TelegramBot (like TwitterBot)',
  'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
  'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)',
  'Mozilla/5.0 (compatible; Google-InspectionTool/1.0)',
  'Scrapy/2.11.0 (+https://scrapy.org)',
  'python-requests/2.31.0 (compatible; ExampleCrawler/1.0; +https://example.com/bot)',
];

const NOT_BOTS = [
  // Generic HTTP clients: a person or the workspace's own program.
  'curl/8.5.0',
  'Wget/1.21.4',
  'python-requests/2.31.0',
  'Python-urllib/3.12',
  'python-httpx/0.27.0',
  'aiohttp/3.9.5',
  'node',
  'undici',
  'node-fetch/1.0 (+https://github.com/bitinn/node-fetch)',
  'axios/1.6.8',
  'got (https://github.com/sindresorhus/got)',
  'Go-http-client/1.1',
  'Go-http-client/2.0',
  'okhttp/4.12.0',
  'Java/17.0.2',
  'Apache-HttpClient/4.5.14 (Java/17.0.2)',
  'PostmanRuntime/7.37.0',
  'insomnia/2023.5.8',
  'HTTPie/3.2.2',
  'libwww-perl/6.72',
  'Ruby',
  'Faraday v2.9.0',
  'GuzzleHttp/7',
  'Deno/1.40.0',
  'Bun/1.1.0',
  'reqwest/0.11',
  // Browsers and in-app browsers.
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 300.0',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
  '',
];

describe('isCrawler', () => {
  it.each(CRAWLERS)('a bot: %s', (ua) => expect(isCrawler(ua)).toBe(true));
  it.each(NOT_BOTS)('not a bot: %s', (ua) => expect(isCrawler(ua)).toBe(false));
});
