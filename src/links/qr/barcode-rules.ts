// What each barcode symbology can hold, and its check digits. Data is given
// with its check digit (verified: a wrong one is refused, naming the expected
// digit) or without it (computed and added). GS1-128 takes element strings in
// the usual human form, "(01)09506000134352(17)271231(10)ABC"; the check
// digits of SSCC (00) and GTIN (01, 02) inside it are verified the same way;
// every other GS1 rule (which AIs exist, their lengths, character sets, dates,
// the other check digits) is bwip-js's GS1 linter's, applied when it renders
// (its refusals become 400s in barcode-refusal.ts).
import { ApiError } from '../../platform/http/errors.ts';

export const SYMBOLOGIES = ['upc-a', 'ean-13', 'ean-8', 'itf-14', 'gs1-128', 'code-128'] as const;
export type Symbology = (typeof SYMBOLOGIES)[number];

/** Names of the symbologies, as messages say them. */
export const SYMBOLOGY_NAME: Record<Symbology, string> = {
  'upc-a': 'UPC-A',
  'ean-13': 'EAN-13',
  'ean-8': 'EAN-8',
  'itf-14': 'ITF-14',
  'gs1-128': 'GS1-128',
  'code-128': 'Code 128',
};

/** bwip-js ids of the symbologies. */
export const BWIP_ID: Record<Symbology, string> = {
  'upc-a': 'upca',
  'ean-13': 'ean13',
  'ean-8': 'ean8',
  'itf-14': 'itf14',
  'gs1-128': 'gs1-128',
  'code-128': 'code128',
};

/** The GS1 mod-10 check digit of a digit string (weights 3,1,3,… from the right). */
export function gs1CheckDigit(digits: string): number {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) sum += Number(digits[digits.length - 1 - i]) * (i % 2 === 0 ? 3 : 1);
  return (10 - (sum % 10)) % 10;
}

const invalid = (message: string) => new ApiError(400, 'invalid_barcode_data', message, [{ path: '/data', message }]);

function checkDigitError(what: string, expected: number, given: string): ApiError {
  const message = `${what}: the check digit should be ${expected}, not ${given}.`;
  return new ApiError(400, 'invalid_check_digit', message, [{ path: '/data', message: `expected check digit ${expected}` }]);
}

/** A GTIN-style number of `length` digits with its check digit: verified, or added when one short. */
function withCheckDigit(data: string, length: number, name: string): string {
  if (!/^\d+$/.test(data)) throw invalid(`${name} holds digits only.`);
  if (data.length === length - 1) return data + String(gs1CheckDigit(data));
  if (data.length !== length) throw invalid(`${name} holds ${length} digits with the check digit (or ${length - 1} without it); got ${data.length}.`);
  const expected = gs1CheckDigit(data.slice(0, -1));
  if (String(expected) !== data.at(-1)) throw checkDigitError(name, expected, data.at(-1)!);
  return data;
}

const GS1_FIXED: Record<string, { length: number; name: string }> = {
  '00': { length: 18, name: 'SSCC (00)' },
  '01': { length: 14, name: 'GTIN (01)' },
  '02': { length: 14, name: 'GTIN of contents (02)' },
};

function gs1Elements(data: string): string {
  const parts = [...data.matchAll(/\((\d{2,4})\)([^()]*)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== data) {
    throw invalid('GS1-128 takes element strings like "(01)09506000134352(10)ABC123": a 2-4 digit AI in parentheses, then its data.');
  }
  for (const [, ai, value] of parts) {
    if (!value) throw invalid(`AI (${ai}) has no data.`);
    // The GS1 character sets are within printable ASCII; which set an AI takes is the linter's to check.
    if (!/^[\x21-\x7e]+$/.test(value!)) throw invalid(`AI (${ai}): a character outside the GS1 character sets (printable ASCII without spaces).`);
    const fixed = GS1_FIXED[ai!];
    if (fixed) {
      if (!/^\d+$/.test(value!) || value!.length !== fixed.length) throw invalid(`${fixed.name} holds exactly ${fixed.length} digits, the check digit included.`);
      withCheckDigit(value!, fixed.length, fixed.name);
    }
  }
  // The GS1 General Specifications' limit for one GS1-128 symbol: 48 characters of AIs and data.
  const characters = parts.reduce((sum, [, ai, value]) => sum + ai!.length + value!.length, 0);
  if (characters > 48) throw invalid(`GS1-128 holds at most 48 characters of AIs and data; got ${characters}.`);
  return data;
}

/** The text to encode, after the symbology's rules; throws a 400 naming the rule that failed. */
export function barcodeText(symbology: Symbology, data: string): string {
  switch (symbology) {
    case 'upc-a': return withCheckDigit(data, 12, 'UPC-A');
    case 'ean-13': return withCheckDigit(data, 13, 'EAN-13');
    case 'ean-8': return withCheckDigit(data, 8, 'EAN-8');
    case 'itf-14': return withCheckDigit(data, 14, 'ITF-14');
    case 'gs1-128': return gs1Elements(data);
    case 'code-128':
      if (!/^[\x20-\x7e]{1,80}$/.test(data)) throw invalid('Code 128 holds 1 to 80 printable ASCII characters.');
      return data;
  }
}
