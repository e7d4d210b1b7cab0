// Every combination of QR styles is rasterised and decoded back to the exact
// text by ZXing (zxing-wasm, the decoder family of most phone scanners) and by
// zbar (zbarimg, another family): styling must never cost scannability.
import { describe, expect, it } from 'vitest';
import { MASK_SHAPES, styledQrSvg, type QrStyle } from '../../../src/links/qr/qr-style.ts';
import { decodeBarcode, decodeWithZbar, svgToPng } from '../../support/links/decode.ts';

const TEXT = 'https://go.example.com/spring-menu-2027';
const modules = ['square', 'dots', 'rounded'] as const;
const eyes = ['square', 'rounded', 'circle'] as const;
const colours: Partial<QrStyle>[] = [
  { fgColor: '#000000' },
  { fgColor: '#1a237e', bgColor: '#fff8e1', eyeColor: '#c62828' },
  { gradient: { type: 'linear', from: '#1a237e', to: '#6a1b9a', rotation: 30 } },
  { gradient: { type: 'radial', from: '#004d40', to: '#1a237e' } },
];

const combinations: QrStyle[] = [];
for (const moduleShape of modules)
  for (const eyeFrameShape of eyes)
    for (const eyeBallShape of eyes)
      for (const qrShape of ['square', 'circle'] as const)
        for (const ringText of [undefined, 'SCAN FOR THE MENU'])
          for (const colour of colours) combinations.push({ moduleShape, eyeFrameShape, eyeBallShape, qrShape, ...(ringText ? { ringText } : {}), ...colour });
// Shape masks with every module shape and eye, with and without a ring.
for (const mask of MASK_SHAPES)
  for (const moduleShape of modules)
    for (const eye of eyes)
      for (const ringText of [undefined, 'SCAN ME']) combinations.push({ mask, moduleShape, eyeFrameShape: eye, eyeBallShape: eye, fgColor: '#b71c1c', ...(ringText ? { ringText } : {}) });

describe('styled QR codes', () => {
  it(`all ${combinations.length} style combinations decode to the exact text (ZXing and zbar)`, async () => {
    const failed: string[] = [];
    const pngs: Buffer[] = [];
    for (const style of combinations) {
      const png = svgToPng(styledQrSvg(TEXT, { size: 512, margin: 4, style }), 600);
      pngs.push(png);
      const decoded = await decodeBarcode(png);
      if (!decoded.some((d) => d.format === 'QRCode' && d.text === TEXT)) failed.push(`ZXing ${JSON.stringify(style)}`);
    }
    decodeWithZbar(pngs).forEach((texts, i) => {
      if (texts.length !== 1 || texts[0] !== TEXT) failed.push(`zbar ${JSON.stringify(combinations[i])}: ${JSON.stringify(texts)}`);
    });
    expect(failed).toEqual([]);
  }, 180_000);

  it('draws the ring text, the colours and a gradient into the SVG', () => {
    const svg = styledQrSvg(TEXT, { size: 300, margin: 4, style: { qrShape: 'circle', ringText: 'A & <B>', gradient: { type: 'linear', from: '#112233', to: '#445566' } } });
    expect(svg).toContain('<textPath');
    expect(svg).toContain('A &#38; &#60;B&#62;');
    expect(svg).toContain('linearGradient');
    expect(svg).toMatch(/width="300" height="300"/);
  });
});
