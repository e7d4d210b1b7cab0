// The rule that tells a machine's open or click from a person's (src/mail/tracking/automated-fetch.ts).
import { describe, expect, it } from 'vitest';
import { ARRIVAL_CLICK_MS, automatedReason, type TrackingFetch } from '../../../src/mail/tracking/automated-fetch.ts';

const person = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148';
const fetch = (over: Partial<TrackingFetch>): TrackingFetch => ({ kind: 'open', method: 'GET', userAgent: person, sinceDeliveryMs: 3_600_000, ...over });

describe('automatedReason', () => {
  it('names each machine by its first rule', () => {
    expect(automatedReason(fetch({ method: 'HEAD' }))).toBe('head_request');
    expect(automatedReason(fetch({ userAgent: undefined }))).toBe('no_user_agent');
    expect(automatedReason(fetch({ userAgent: '  ' }))).toBe('no_user_agent');
    expect(automatedReason(fetch({ userAgent: 'Mozilla/5.0' }))).toBe('privacy_proxy');
    expect(automatedReason(fetch({ userAgent: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' }))).toBe('bot');
    expect(automatedReason(fetch({ userAgent: 'python-requests/2.31 (LinkScanner)' }))).toBe('bot');
    expect(automatedReason(fetch({ kind: 'click', sinceDeliveryMs: ARRIVAL_CLICK_MS - 1 }))).toBe('arrival_click');
  });

  it('leaves people, on-open image proxies and generic HTTP clients alone', () => {
    expect(automatedReason(fetch({}))).toBeNull();
    expect(automatedReason(fetch({ userAgent: 'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.12026; Pro)' }))).toBeNull();
    expect(automatedReason(fetch({ userAgent: 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)' }))).toBeNull();
    expect(automatedReason(fetch({ userAgent: 'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html' }))).toBeNull();
    expect(automatedReason(fetch({ userAgent: 'curl/8.5.0' }))).toBeNull();
    // Opens have no timing rule; a click without a known delivery, or after the first seconds, is a person's.
    expect(automatedReason(fetch({ sinceDeliveryMs: 0 }))).toBeNull();
    expect(automatedReason(fetch({ kind: 'click', sinceDeliveryMs: null }))).toBeNull();
    expect(automatedReason(fetch({ kind: 'click', sinceDeliveryMs: ARRIVAL_CLICK_MS }))).toBeNull();
  });
});
