// The mail product's part of the MCP endpoint: its tools, answering mail keys
// (mk_live_…) with the mail API's authentication and per-key request limit
// (the same hook as REST, so MCP calls count in the same allowance), each kind
// of key seeing only the tools it may use (mail-tool.ts), and refusals as the
// mail API's error body (Resend's shape with the platform's error object).
import type { RequestHook } from '../../platform/http/api-shell.ts';
import type { McpProduct } from '../../platform/mcp/mcp-product.ts';
import type { McpServerInfo } from '../../platform/mcp/mcp-server.ts';
import type { Pool } from '../../platform/postgres/pool.ts';
import { hasMailKey, MAIL_SECURITY_SCHEME } from '../auth/mail-auth.ts';
import type { ContactProperties } from '../audience/contact-properties.ts';
import type { Contacts } from '../audience/contacts.ts';
import type { SubscriptionTopics } from '../audience/subscription-topics.ts';
import type { BroadcastOperationDeps } from '../broadcasts/broadcast-operations.ts';
import type { EmailOperationDeps } from '../emails/email-operations.ts';
import { mailErrorBody } from '../http/mail-errors.ts';
import type { Suppressions } from '../suppressions/suppressions.ts';
import { audienceTools } from './audience-tools.ts';
import { broadcastTools } from './broadcast-tools.ts';
import { contactTools } from './contact-tools.ts';
import { emailTools } from './email-tools.ts';
import { kindsOf, mailToolRefusal, type MailTool, type MailToolContext } from './mail-tool.ts';
import { suppressionTools } from './suppression-tools.ts';

export const MAIL_SERVER_INFO: McpServerInfo = {
  name: 'linkmail-mail',
  title: 'Mail: sending, audience and broadcasts',
  version: '1.0.0',
  instructions:
    'Tools for one organization of a mail service with Resend-compatible sending: send and follow single emails, manage contacts, and send broadcasts to a topic\'s ' +
    'subscribed contacts with a report. A From address must be on a verified domain of the organization. Ids come from the tools that create or list things ' +
    '(send_email, list_emails, add_contact, list_contacts, list_topics, list_segments, create_broadcast). The key\'s kind decides which tools are listed. Errors come ' +
    'back as results with isError and the mail API\'s JSON body {"statusCode","name","message","error":{"code","message","details"}}; `name` and `error.code` are the stable code.',
};

export interface MailMcpDeps extends EmailOperationDeps, BroadcastOperationDeps {
  /** The mail API's authentication and per-key limit hook, shared so REST and MCP count against one allowance. */
  authenticate: RequestHook;
  contacts: Contacts;
  contactProperties: ContactProperties;
  subscriptionTopics: SubscriptionTopics;
  suppressions: Suppressions;
  pg: Pool;
  /** The platform's default requests per second of a key (a key may have its own cap). */
  requestsPerSecond: number;
}

export function mailMcpTools(deps: Omit<MailMcpDeps, 'authenticate' | 'requestsPerSecond'>): MailTool[] {
  return [
    ...emailTools(deps),
    ...contactTools(deps),
    ...audienceTools(deps),
    ...broadcastTools(deps),
    ...suppressionTools(deps),
  ];
}

export function mailMcpProduct(deps: MailMcpDeps): McpProduct<MailToolContext> {
  return {
    name: 'mail',
    securityScheme: MAIL_SECURITY_SCHEME,
    claims: hasMailKey,
    authenticate: deps.authenticate,
    // The request fields the mail hook and limit set, declared as in the mail API's own contexts.
    decorate: (scope) => {
      scope.decorateRequest('mailAuth', null as never);
      scope.decorateRequest('mailBatchReservation', null);
    },
    callerOf: (request) => ({ tenantId: request.mailAuth.organizationId, grant: request.mailAuth }),
    server: MAIL_SERVER_INFO,
    tools: mailMcpTools(deps),
    refusal: mailToolRefusal,
    errorBody: mailErrorBody,
    discovery: {
      description: 'Send and follow single emails, add, find and change contacts, list topics and segments, create and send broadcasts and read their reports, and suppress addresses, for one organization.',
      keys: 'The mail API keys (mk_live_…): a full key lists every mail tool, a send key the email tools, a test key the broadcast report; a domain-restricted key sends from and sees only its domains.',
      rateLimit: {
        requests: deps.requestsPerSecond,
        windowSeconds: 1,
        scope: 'key',
        description: 'Shared with the mail REST API and the SMTP relay: every POST to the endpoint counts as one request of the key; a key may have its own cap (1 to 1000) instead of this default.',
      },
      keysOf: kindsOf,
    },
  };
}
