// The MCP tool over the suppression list: add_suppression, through the function
// of POST /api/v1/suppressions, with its body as arguments. Full keys use it.
import { Type } from '@sinclair/typebox';
import type { Suppressions } from '../suppressions/suppressions.ts';
import { addSuppression } from '../suppressions/suppression-operations.ts';
import { AddSuppressionBody, SuppressionSchema } from '../suppressions/suppression-schemas.ts';
import { mailTool } from './mail-tool.ts';
import { ADDS_ONCE } from './tool-pieces.ts';

export function suppressionTools(deps: { suppressions: Suppressions }) {
  const add = mailTool({ access: 'manage', kinds: ['full'] }, {
    name: 'add_suppression',
    title: 'Suppress an address',
    description:
      'Puts an address on the organization\'s suppression list (POST /api/v1/suppressions): no email or broadcast message goes to it any more. `reason` is manual ' +
      'by default (bounce, complaint, unsubscribe). An address already on the list keeps its entry (`created` false). Errors: invalid_email.',
    input: AddSuppressionBody,
    // The REST answer, and what REST says with 201 or 200.
    output: Type.Object({ ...SuppressionSchema.properties, created: Type.Boolean({ description: 'False when the address was on the list already (its reason unchanged).' }) }),
    annotations: ADDS_ONCE,
    async run(args, ctx) {
      const { suppression, created } = await addSuppression(deps.suppressions, ctx.grant.organizationId, args);
      return { summary: created ? `Suppressed ${suppression.email} (${suppression.reason}).` : `${suppression.email} was suppressed already (${suppression.reason}).`, result: { ...suppression, created } };
    },
  });
  return [add];
}
