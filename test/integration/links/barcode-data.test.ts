// Barcode data a symbology cannot hold, over real HTTP: every application
// identifier of GS1-128 is checked against the GS1 rules (bwip-js's GS1
// linter), and whatever the renderer refuses is a 400, never a 5xx. A
// property test sends random data to every symbology.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, startIngress, type TestIngress } from '../../support/ingress.ts';
import { workspaceWithKey } from '../../support/links/workspaces.ts';
import { SYMBOLOGIES } from '../../../src/links/qr/barcode-rules.ts';

let ingress: TestIngress;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  ingress = await startIngress({ API_RATE_LIMIT_PER_MINUTE: '100000' });
  api = client(ingress.url, (await workspaceWithKey(ingress.url)).key);
});
afterAll(async () => {
  await ingress?.close();
});

const gs1 = (data: string) => api.post('/api/v1/barcode', { symbology: 'gs1-128', data, format: 'svg' });

describe('GS1-128 element strings', () => {
  it.each([
    ['an AI that does not exist', '(9999)ABC', /AI \(9999\).*unrecognised/i],
    ['an invalid month in a date', '(17)991340', /AI \(17\).*month/i],
    ['an invalid day in a date', '(17)270231', /AI \(17\).*day/i],
    ['day 00 where GS1 does not allow it', '(7006)271200', /AI \(7006\).*day/i],
    ['a batch number longer than 20', `(10)${'A'.repeat(26)}`, /AI \(10\).*too long/i],
    ['a character outside set 82', '(10)AB C', /AI \(10\).*character/i],
    ['letters in a numeric AI', '(3103)00018X', /AI \(3103\)/],
    ['a too short fixed-length value', '(422)12', /AI \(422\).*too short/i],
    ['a repeated AI with another value', '(10)AB(10)CD', /\(10\)/],
    ['more than 48 data characters', `(01)10012345678902(21)${'A'.repeat(20)}(10)${'B'.repeat(20)}`, /48/],
  ])('refuses %s: 400 invalid_barcode_data naming the AI', async (_what, data, message) => {
    const res = await gs1(data);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.code).toBe('invalid_barcode_data');
    expect(res.body.error.message).toMatch(message);
    expect(res.body.error.details).toEqual([{ path: '/data', message: expect.any(String) }]);
  });

  it('refuses a wrong check digit in any GTIN, SSCC or GLN-type AI', async () => {
    for (const data of ['(414)1234567890123', '(00)123456789012345670', '(8018)123456789012345670']) {
      const res = await gs1(data);
      expect(res.status, data).toBe(400);
      expect(res.body.error.code, data).toBe('invalid_check_digit');
    }
  });

  it.each([
    '(01)09506000134352(17)271231(10)ABC123',
    '(17)271200', // expiry day 00: the end of the month, as GS1 allows
    '(00)123456789012345675',
    '(414)1234567890128(8200)http://example.com/x',
    '(02)10012345678902(37)5',
    '(3103)000189(21)a"%&\'*+,-./:;<=>?_z',
  ])('renders valid data %s', async (data) => {
    const res = await gs1(data);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });
});

describe('random data to every symbology', () => {
  // Element strings from real and made-up AIs with random values, digit strings around the
  // retail lengths, and any text at all.
  const ais = ['00', '01', '02', '10', '11', '15', '17', '21', '22', '30', '37', '240', '253', '310', '3103', '392', '400', '410', '414', '422', '7003', '8003', '8018', '8200', '9', '99', '999', '9999'];
  const value = fc.oneof(fc.stringMatching(/^\d{0,20}$/), fc.string({ maxLength: 22 }), fc.stringMatching(/^[!-~]{0,22}$/));
  const element = fc.tuple(fc.constantFrom(...ais), value).map(([ai, v]) => `(${ai})${v}`);
  const data = fc.oneof(
    fc.array(element, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('')),
    fc.stringMatching(/^\d{1,20}$/),
    fc.string({ minLength: 1, maxLength: 100, unit: 'binary' }),
    fc.stringMatching(/^[ -~]{1,90}$/),
  );
  const body = fc.record({
    symbology: fc.constantFrom(...SYMBOLOGIES),
    data,
    format: fc.constantFrom('png', 'svg'),
    scale: fc.integer({ min: 1, max: 10 }),
    height: fc.integer({ min: 5, max: 50 }),
    includeText: fc.boolean(),
  });

  it('never answers a 5xx', async () => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(body, async (request) => {
        const res = await api.post('/api/v1/barcode', request);
        seen.add(res.status);
        expect(res.status, `${JSON.stringify(request)} -> ${JSON.stringify(res.body)}`).toBeLessThan(500);
        if (res.status === 400) expect(['invalid_barcode_data', 'invalid_check_digit', 'validation_failed']).toContain(res.body.error.code);
        else expect(res.status).toBe(200);
      }),
      { numRuns: 600 },
    );
    // The generators reach both answers.
    expect([...seen].sort()).toEqual([200, 400]);
  }, 120_000);
});
