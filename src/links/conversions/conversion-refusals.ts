// How the API answers a refused conversion, the same from REST and MCP: the
// status, code, message and the field it names.
import { ApiError, notFound } from '../../platform/http/errors.ts';
import type { ConversionType } from './conversion-schemas.ts';
import type { ConversionRefusal, ConversionResult } from './conversions.ts';
import type { ResolvedScope, ScopeResult } from './funnel-query.ts';

const invalid = (code: string, message: string, field: string) => new ApiError(400, code, message, [{ path: `/${field}`, message }]);

export function conversionRefusalError(r: ConversionRefusal): ApiError {
  switch (r.reason) {
    case 'click_id_malformed': return invalid(r.reason, 'clickId is not a click ID: it is the 84-character svc_cid value added to the destination URL.', 'clickId');
    case 'click_id_unknown':
      return new ApiError(404, r.reason, r.linkGone ? 'The link of this click ID no longer exists.' : 'This click ID was not issued by this service (its signature does not verify).');
    case 'click_id_other_workspace': return new ApiError(403, r.reason, 'This click ID belongs to another workspace.');
    case 'amount_not_allowed': return invalid(r.reason, 'A tracked click carries no revenue; send amount and currency with a conversion.', 'amount');
    case 'amount_required': return invalid(r.reason, 'currency was given without amount.', 'amount');
    case 'currency_required': return invalid(r.reason, 'amount needs an ISO 4217 currency, e.g. "EUR".', 'currency');
    case 'unknown_currency': return invalid(r.reason, `${r.currency} is not an ISO 4217 currency code.`, 'currency');
    case 'amount_too_precise': return invalid(r.reason, `amount has more than ${r.maxDecimals} decimal places.`, 'amount');
    case 'invalid_metadata_key': return invalid(r.reason, `metadata keys are 1 to 64 characters without control characters; "${r.key.slice(0, 80)}" is not.`, 'metadata');
    case 'metadata_too_large': return invalid(r.reason, `metadata is larger than ${r.maxBytes} bytes as JSON.`, 'metadata');
  }
}

/** The conversion, or its refusal thrown as the API's answer. */
export function conversionOrRefused(result: ConversionResult): ConversionType {
  if (!result.ok) throw conversionRefusalError(result.refusal);
  return result.conversion;
}

/** The funnel's scope, or 404 not_found for a link or campaign that is not the workspace's. */
export function scopeOrRefused(result: ScopeResult): ResolvedScope {
  if (!result.ok) throw notFound(result.refusal.resource);
  return result.scope;
}
