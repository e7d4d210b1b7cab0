// The mail product's services, made once per process from the platform's
// connections and the mail settings.
import type { Outbox } from '../platform/outbox/outbox.ts';
import type { Platform } from '../platform/platform.ts';
import { MailKeys } from './accounts/mail-keys.ts';
import { Organizations } from './accounts/organizations.ts';
import type { MailConfig } from './config.ts';
import { Domains } from './domains/domains.ts';

export interface MailServices {
  config: MailConfig;
  organizations: Organizations;
  keys: MailKeys;
  domains: Domains;
  /** The mail outboxes the ingress relays. */
  outboxes: Outbox[];
}

export function wireMail(platform: Platform, config: MailConfig): MailServices {
  const { pg } = platform;
  return {
    config,
    organizations: new Organizations(pg),
    keys: new MailKeys(pg),
    domains: new Domains(pg),
    outboxes: [],
  };
}
