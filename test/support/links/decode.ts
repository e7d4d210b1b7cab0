// Reads images back the way a scanner would: SVG rasterised with resvg, QR codes
// decoded with jsQR, barcodes with zxing-wasm (its wasm loaded from the package),
// and with zbar (Debian's zbar-tools, installed by infra/local/stack.sh), a
// second decoder family.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Resvg } from '@resvg/resvg-js';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';

const require = createRequire(import.meta.url);
// jsqr is CommonJS with a default export: normalise it under ESM.
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;

// resvg loads every system font for each image unless given fonts (about 0.2 s of CPU an image with
// the ~150 fonts chromium's packages bring): the sans-serif fonts QR ring texts ask for are enough.
const SANS = ['liberation/LiberationSans-Bold.ttf', 'liberation/LiberationSans-Regular.ttf', 'dejavu/DejaVuSans-Bold.ttf', 'dejavu/DejaVuSans.ttf']
  .map((file) => `/usr/share/fonts/truetype/${file}`)
  .filter((file) => existsSync(file));
const FONTS = SANS.length > 0
  ? { loadSystemFonts: false, fontFiles: SANS, sansSerifFamily: SANS[0]!.includes('Liberation') ? 'Liberation Sans' : 'DejaVu Sans' }
  : { loadSystemFonts: true };

export function svgToPng(svg: Buffer | string, width = 600): Buffer {
  return Buffer.from(new Resvg(svg.toString(), { fitTo: { mode: 'width', value: width }, background: 'white', font: FONTS }).render().asPng());
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

/** The texts zbar reads in each PNG, in order (an empty list where it reads nothing); one zbarimg for all. */
export function decodeWithZbar(pngs: Buffer[]): string[][] {
  const dir = mkdtempSync(join(tmpdir(), 'zbar-'));
  try {
    const files = pngs.map((png, i) => {
      const file = join(dir, `${i}.png`);
      writeFileSync(file, png);
      return file;
    });
    let xml: string;
    try {
      xml = execFileSync('zbarimg', ['-q', '--xml', ...files], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 * 1024 * 1024 });
    } catch (err) {
      // Exit status 4: no symbol in any image.
      if ((err as { status?: number }).status !== 4) throw err;
      xml = (err as { stdout: string }).stdout;
    }
    // --xml names each image it read something in, and keeps multi-line texts apart.
    const found = new Map<string, string[]>();
    for (const [, href, body] of xml.matchAll(/<source href='([^']*)'>([\s\S]*?)<\/source>/g)) {
      found.set(href!, [...body!.matchAll(/<data><!\[CDATA\[([\s\S]*?)\]\]><\/data>/g)].map((m) => m[1]!));
    }
    return files.map((file) => found.get(file) ?? []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
