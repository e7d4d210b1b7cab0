// Resend's error names for our refusals (src/mail/resend/resend-errors.ts), where Resend's SDK reads them.
import { describe, expect, it } from 'vitest';
import { resendErrorName } from '../../../src/mail/resend/resend-errors.ts';

describe('resendErrorName', () => {
  it('names a key of too little permission restricted_api_key: a send key (insufficient_permissions) and a domain-restricted key at an organization-wide resource (domain_restricted_key)', () => {
    expect(resendErrorName('insufficient_permissions', 403)).toBe('restricted_api_key');
    expect(resendErrorName('domain_restricted_key', 403)).toBe('restricted_api_key');
    expect(resendErrorName('domain_not_allowed', 403)).toBe('invalid_access');
  });
});
