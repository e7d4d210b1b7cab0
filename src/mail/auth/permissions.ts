// What each kind of mail key may do: deny by default. Every mail route declares
// the access it needs (route config `mailAccess`); a route that declares none is
// refused at start-up, so no route is reachable by accident.
//
//   access      what it covers                                         full send test
//   manage      domains, contacts, topics, segments, templates,         ✓
//               suppressions, automations (create, change, delete, read)
//   send        POST /emails, POST /emails/batch,                       ✓    ✓
//               POST /emails/:id/cancel, PATCH /emails/:id (reschedule)
//   events      POST /events                                            ✓    ✓
//   broadcasts  create, read, send, cancel, decide, resend broadcasts   ✓    ✓
//   reports     GET /api/v1/broadcasts/:id/report                      ✓    ✓    ✓
//   read_emails GET /emails/:id (a message's state), GET /emails        ✓    ✓    ✓
//
// A domain-restricted key (its `domains`) additionally uses and sees only those
// domains: it sends and creates broadcasts only from them, and another domain's
// resources (the domain itself, its messages, broadcasts and reports) are 404
// (also to cancel or reschedule), and GET /emails lists only its domains' messages.
// Routes whose data spans every domain of the organization (route config
// `wholeOrganization`: /webhooks, whose deliveries carry every domain's mail and
// contact.* events bound to none) refuse such a key outright: 403 domain_restricted_key.
import { ApiError } from '../../platform/http/errors.ts';
import type { KeyKind, MailKeyGrant } from '../accounts/mail-keys.ts';

export const MAIL_ACCESS = ['manage', 'send', 'events', 'broadcasts', 'reports', 'read_emails'] as const;
export type MailAccess = (typeof MAIL_ACCESS)[number];

const KIND_ACCESS: Record<KeyKind, ReadonlySet<MailAccess>> = {
  full: new Set(MAIL_ACCESS),
  send: new Set(['send', 'events', 'broadcasts', 'reports', 'read_emails']),
  test: new Set(['reports', 'read_emails']),
};

export const kindAllows = (kind: KeyKind, access: MailAccess): boolean => KIND_ACCESS[kind].has(access);

/** Refuses with 403 when the key's kind does not allow `access`. */
export function requireAccess(grant: MailKeyGrant, access: MailAccess): void {
  if (!kindAllows(grant.kind, access)) {
    throw new ApiError(403, 'insufficient_permissions', `A ${grant.kind} key cannot do this (it needs ${access} access); use a key of a kind that allows it.`);
  }
}

/** Refuses a domain-restricted key at a route whose data spans every domain of the organization. */
export function requireWholeOrganization(grant: MailKeyGrant): void {
  if (grant.domains !== null) {
    throw new ApiError(403, 'domain_restricted_key', 'This key is restricted to some domains; this resource spans every domain of the organization: use a key without domain restriction.');
  }
}

/** Whether the key may use and see the domain `name` (lower-case). */
export const mayUseDomain = (grant: MailKeyGrant, name: string): boolean => grant.domains === null || grant.domains.includes(name.toLowerCase());

/**
 * Why the key may not send from `domain`, or undefined when it may: 403 when the key is
 * restricted to other domains, 422 when the organization has not verified it. `at` is the
 * JSON pointer of the item the From belongs to ('' for the body itself).
 */
export function fromDomainRefusal(grant: MailKeyGrant, domain: string, verified: ReadonlySet<string>, at = ''): ApiError | undefined {
  if (!mayUseDomain(grant, domain)) return new ApiError(403, 'domain_not_allowed', `This key may not send from ${domain}.`, [{ path: `${at}/from`, message: 'domain not allowed for this key' }]);
  if (!verified.has(domain)) {
    return new ApiError(422, 'from_domain_not_verified', `${domain} is not a verified domain of this organization; add it under /api/v1/domains and verify it.`, [{ path: `${at}/from`, message: 'domain not verified' }]);
  }
  return undefined;
}
