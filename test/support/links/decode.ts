// Reads images back the way a scanner would: SVG rasterised with resvg, QR codes
// decoded with jsQR, barcodes with zxing-wasm (its wasm loaded from the package).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Resvg } from '@resvg/resvg-js';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';

const require = createRequire(import.meta.url);
// jsqr is CommonJS with a default export: normalise it under ESM.
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;

export function svgToPng(svg: Buffer | string, width = 600): Buffer {
  return Buffer.from(new Resvg(svg.toString(), { fitTo: { mode: 'width', value: width }, background: 'white' }).render().asPng());
}

export function pngSize(png: Buffer): { width: number; height: number } {
  const image = PNG.sync.read(png);
  return { width: image.width, height: image.height };
}

export function decodeQr(png: Buffer): string | undefined {
  const image = PNG.sync.read(png);
  return jsQR(new Uint8ClampedArray(image.data), image.width, image.height)?.data;
}

let reader: typeof import('zxing-wasm/reader') | undefined;

export async function decodeBarcode(png: Buffer): Promise<{ format: string; text: string }[]> {
  if (!reader) {
    reader = await import('zxing-wasm/reader');
    await reader.prepareZXingModule({ overrides: { wasmBinary: readFileSync(require.resolve('zxing-wasm/reader/zxing_reader.wasm')) }, fireImmediately: true });
  }
  const results = await reader.readBarcodes(new Blob([new Uint8Array(png)]), { tryHarder: true });
  return results.map((r) => ({ format: r.format, text: r.text }));
}
