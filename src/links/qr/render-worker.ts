// The render worker (a Piscina task): draws QR codes with `qrcode` and
// barcodes with `bwip-js`, off the ingress's event loop.
import { createRequire } from 'node:module';
import { isMainThread } from 'node:worker_threads';
import bwipjs from 'bwip-js';
import QRCode from 'qrcode';
import type { BarcodeTask, QrTask, RenderRefusal, RenderResult, RenderTask } from './render-task.ts';
import { styledQrSvg } from './qr-style.ts';
import { runAtIdlePriority } from '../../platform/threads/idle-priority.ts';

// qrcode's own PNG renderer, encoded with pngjs's synchronous writer: QRCode.toBuffer deflates on
// libuv's shared threadpool, which leaves this thread idle while it waits and runs the deflate
// at normal priority beside the event loop. Synchronously, the whole render stays on this thread.
// pngjs is resolved from qrcode's own folder: the version its renderer was written for.
const require = createRequire(createRequire(import.meta.url).resolve('qrcode'));
const pngRenderer = require('./renderer/png.js') as { render(qr: QRCode.QRCode, options: QRCode.QRCodeRenderersOptions): unknown };
const { PNG } = require('pngjs') as { PNG: { sync: { write(png: unknown): Buffer } } };

function qrPng(text: string, options: QRCode.QRCodeToBufferOptions): Buffer {
  return PNG.sync.write(pngRenderer.render(QRCode.create(text, options), options));
}

async function qr(task: QrTask): Promise<RenderResult> {
  if (task.style) return { contentType: 'image/svg+xml', body: Buffer.from(styledQrSvg(task.text, { size: task.size, margin: task.margin, style: task.style })) };
  const options = {
    errorCorrectionLevel: task.errorCorrection,
    margin: task.margin,
    width: task.size,
    color: { dark: task.fgColor, light: task.bgColor },
  };
  if (task.format === 'svg') {
    const svg = await QRCode.toString(task.text, { ...options, type: 'svg' });
    return { contentType: 'image/svg+xml', body: Buffer.from(svg) };
  }
  return { contentType: 'image/png', body: qrPng(task.text, options) };
}

/**
 * bwip-js's SVG has only a viewBox, its natural size in pixels (the PNG's); without width and
 * height an inline SVG in an inline-block is 0 px wide, so they are set to that size.
 */
function withPixelSize(svg: string): string {
  return svg.replace(/^<svg viewBox="0 0 (\d+) (\d+)"/, '<svg width="$1" height="$2" viewBox="0 0 $1 $2"');
}

// bwip-js raises "bwipp.<reason>#<line>: <message>" for input its symbology cannot hold (its GS1
// linter checks every application identifier); anything else it throws is a bug.
const BWIPP_REFUSAL = /^bwipp\.\w+#\d+: /;

async function barcode(task: BarcodeTask): Promise<RenderResult | RenderRefusal> {
  try {
    return await drawBarcode(task);
  } catch (err) {
    const message = (err as Error)?.message ?? String(err);
    if (BWIPP_REFUSAL.test(message)) return { refused: message };
    throw err;
  }
}

async function drawBarcode(task: BarcodeTask): Promise<RenderResult> {
  const options = {
    bcid: task.bcid,
    text: task.text,
    scale: task.scale,
    height: task.height,
    includetext: task.includeText,
    // No text alignment of ours: bwip-js's default for EAN/UPC is the retail layout (guard bars
    // extended, digits grouped under the halves, the leading and trailing digits outside).
    // White quiet zone and background: scanners need both.
    paddingwidth: 10,
    paddingheight: 6,
    backgroundcolor: 'FFFFFF',
    ...(task.bcid === 'gs1-128' ? { parsefnc: false } : {}),
  };
  if (task.format === 'svg') return { contentType: 'image/svg+xml', body: Buffer.from(withPixelSize(bwipjs.toSVG(options))) };
  return { contentType: 'image/png', body: await bwipjs.toBuffer(options) };
}

// Rendering takes only the CPU that the event loop (redirects) and everything else leave free.
if (!isMainThread) runAtIdlePriority();

export default async function render(task: RenderTask): Promise<RenderResult | RenderRefusal> {
  return task.kind === 'qr' ? qr(task) : barcode(task);
}
