// Adding an address to the suppression list, for POST /api/v1/suppressions and
// the MCP tool alike: the same address check, the same store.
import type { Static } from '@sinclair/typebox';
import { ApiError } from '../../platform/http/errors.ts';
import { parseEmail } from '../http/email-address.ts';
import type { AddSuppressionBody } from './suppression-schemas.ts';
import { toSuppression, type Suppressions } from './suppressions.ts';

/** The entry, and whether it is new: an address already on the list keeps its entry (and reason). */
export async function addSuppression(suppressions: Suppressions, organizationId: string, body: Static<typeof AddSuppressionBody>) {
  const address = parseEmail(body.email.trim());
  if (!address) throw new ApiError(400, 'invalid_email', 'email is not an email address.', [{ path: '/email', message: 'not an email address' }]);
  const { row, created } = await suppressions.add(organizationId, address.key, body.reason ?? 'manual');
  return { suppression: toSuppression(row), created };
}
