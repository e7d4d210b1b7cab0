// The form a password-protected link answers instead of its redirect. It names
// nothing of the link (no destination, no title) and posts `password`
// (application/x-www-form-urlencoded) back to the URL it was served at, so the
// short URL's own query string goes with it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from '../../platform/http/server.ts';

const html = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export const PASSWORD_PROBLEMS = {
  password_required: { status: 401, message: 'This link is protected by a password.' },
  password_missing: { status: 400, message: 'Enter the password.' },
  password_incorrect: { status: 401, message: 'That password is not right. Try again.' },
  password_rate_limited: { status: 429, message: 'Too many attempts. Wait a few minutes and try again.' },
} as const;
export type PasswordProblem = keyof typeof PASSWORD_PROBLEMS;

export function passwordForm(message: string | null): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><meta name="referrer" content="no-referrer"><title>Password required</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:24rem;margin:15vh auto;padding:0 1rem;color:#222}input,button{font:inherit;padding:.4rem .6rem}p.error{color:#b00020}</style>
</head><body><h1>Password required</h1><p>This link is protected by a password.</p>
${message === null ? '' : `<p class="error" role="alert">${html(message)}</p>`}<form method="post">
<label for="password">Password</label><br>
<input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Continue</button>
</form></body></html>`;
}

/**
 * Answers with the form: 200 when it is first shown (GET), else with the problem's status and
 * message (the form again). A client that asks for JSON gets the error body with the problem's code.
 */
export function sendPasswordForm(request: FastifyRequest, reply: FastifyReply, problem: PasswordProblem | null, headers: Record<string, string> = {}): void {
  reply.headers(headers).header('cache-control', 'private, no-store, max-age=0').header('referrer-policy', 'no-referrer').header('x-robots-tag', 'noindex');
  const shown = problem ?? 'password_required';
  if ((request.headers.accept ?? '').includes('application/json')) {
    reply.status(PASSWORD_PROBLEMS[shown].status).send(errorBody(request.id, shown, PASSWORD_PROBLEMS[shown].message));
    return;
  }
  reply
    .status(problem === null ? 200 : PASSWORD_PROBLEMS[problem].status)
    .header('x-frame-options', 'DENY')
    .type('text/html; charset=utf-8')
    .send(passwordForm(problem === null ? null : PASSWORD_PROBLEMS[problem].message));
}
