// Small pages for scans that do not redirect. Browsers get HTML; a client that
// asks for JSON (Accept: application/json) gets the shared error body.
const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function htmlPage(title: string, message: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${escape(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:15vh auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}</style>
</head><body><h1>${escape(title)}</h1><p>${escape(message)}</p></body></html>`;
}

/** Why a link does not redirect, and how that is answered. */
export const REFUSALS = {
  not_found: { status: 404, title: 'Link not found', message: 'This short link does not exist. Check the address and try again.' },
  link_inactive: { status: 410, title: 'Link deactivated', message: 'This short link has been deactivated by its owner.' },
  link_expired: { status: 410, title: 'Link expired', message: 'This short link has expired.' },
  scan_limit_reached: { status: 410, title: 'Scan limit reached', message: 'This short link has reached its maximum number of scans.' },
  link_not_yet_valid: { status: 404, title: 'Link not active yet', message: 'This short link is not active yet. Try again later.' },
  redirect_rate_limited: { status: 429, title: 'Too many requests', message: 'Too many scans from your network in the last minute. Please wait a moment and try again.' },
} as const;

export type Refusal = keyof typeof REFUSALS;
