import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/platform/http/errors.ts';
import { barcodeText, gs1CheckDigit } from '../../../src/links/qr/barcode-rules.ts';

const error = (fn: () => unknown): ApiError => {
  try {
    fn();
  } catch (err) {
    return err as ApiError;
  }
  throw new Error('no error');
};

describe('barcode rules', () => {
  it('computes GS1 check digits', () => {
    expect(gs1CheckDigit('590123412345')).toBe(7);
    expect(gs1CheckDigit('03600029145')).toBe(2);
    expect(gs1CheckDigit('9638507')).toBe(4);
    expect(gs1CheckDigit('1001234567890')).toBe(2);
  });

  it('verifies a given check digit and names the expected one', () => {
    expect(barcodeText('ean-13', '5901234123457')).toBe('5901234123457');
    const wrong = error(() => barcodeText('ean-13', '5901234123458'));
    expect(wrong.code).toBe('invalid_check_digit');
    expect(wrong.message).toContain('should be 7');
    expect(error(() => barcodeText('upc-a', '036000291453')).message).toContain('should be 2');
    expect(error(() => barcodeText('ean-8', '96385070')).message).toContain('should be 4');
    expect(error(() => barcodeText('itf-14', '10012345678901')).message).toContain('should be 2');
  });

  it('adds the check digit when it is left out', () => {
    expect(barcodeText('ean-13', '590123412345')).toBe('5901234123457');
    expect(barcodeText('upc-a', '03600029145')).toBe('036000291452');
  });

  it('refuses data the symbology cannot hold, naming the rule', () => {
    expect(error(() => barcodeText('ean-13', '59012341234A')).message).toContain('digits only');
    expect(error(() => barcodeText('ean-8', '123')).message).toContain('8 digits');
    expect(error(() => barcodeText('code-128', 'héllo')).code).toBe('invalid_barcode_data');
    expect(error(() => barcodeText('code-128', 'x'.repeat(81))).message).toContain('1 to 80');
  });

  it('checks GS1-128 element strings and the GTIN check digit inside', () => {
    expect(barcodeText('gs1-128', '(01)10012345678902(10)ABC')).toBe('(01)10012345678902(10)ABC');
    expect(error(() => barcodeText('gs1-128', '(01)10012345678901')).message).toContain('should be 2');
    expect(error(() => barcodeText('gs1-128', '01 10012345678902')).message).toContain('element strings');
    expect(error(() => barcodeText('gs1-128', '(01)123')).message).toContain('exactly 14 digits');
  });
});

describe('plan gating of advanced QR styles', () => {
  it('lets Pro and Enterprise use shape masks and halftone art, not Free', async () => {
    const { canUseAdvancedQrStyles } = await import('../../../src/links/workspaces/plans.ts');
    expect(canUseAdvancedQrStyles('free')).toBe(false);
    expect(canUseAdvancedQrStyles('pro')).toBe(true);
    expect(canUseAdvancedQrStyles('enterprise')).toBe(true);
  });
});
