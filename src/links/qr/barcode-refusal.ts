// A barcode the renderer refused to draw, as the 400 the client gets. bwip-js
// (BWIPP) refuses with "bwipp.<reason>#<line>: <message>"; for GS1-128 its
// linter names the application identifier ("AI 17: Invalid month").
import { ApiError } from '../../platform/http/errors.ts';

export function barcodeRefusal(symbologyName: string, refusal: string): ApiError {
  const [, reason = '', text = refusal] = /^bwipp\.(\w+)#\d+: (.*)$/s.exec(refusal) ?? [];
  const said = text.replace(/^AI (\d+):/, 'AI ($1):').replace(/\.?$/, '.');
  const message = `${symbologyName}: ${said}`;
  const code = /checksum|checkdigit/i.test(reason) ? 'invalid_check_digit' : 'invalid_barcode_data';
  return new ApiError(400, code, message, [{ path: '/data', message: said }]);
}
