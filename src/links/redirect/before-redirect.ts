// What a link may answer before its redirect: a preview card to a link-preview
// crawler (preview-card.ts), the password form to a visitor who has not given
// the password (password-page.ts). Neither is a scan. The redirect asks only for
// links that use one of them (usesPageBeforeRedirect: two property checks on the
// cached state), so other links pay nothing more.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LinkState } from '../changelog/link-state.ts';
import { hasPreviewCard, isPreviewFetcher, sendPreviewCard } from './preview-card.ts';
import { sendPasswordForm } from './password-page.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by POST /:shortId once the link's password was given (password-route.ts). */
    passwordAccepted?: boolean;
  }
}

export const usesPageBeforeRedirect = (link: LinkState): boolean => link.passwordProtected === true || hasPreviewCard(link);

/** Answers with the page the link shows before its redirect, if it shows one now; true when it did. */
export function answeredBeforeRedirect(request: FastifyRequest, reply: FastifyReply, link: LinkState): boolean {
  if (hasPreviewCard(link) && isPreviewFetcher(request)) {
    sendPreviewCard(request, reply, link);
    return true;
  }
  if (link.passwordProtected === true && request.passwordAccepted !== true) {
    sendPasswordForm(request, reply, null);
    return true;
  }
  return false;
}
