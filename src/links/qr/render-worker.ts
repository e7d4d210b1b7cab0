// The render worker (a Piscina task): draws QR codes with `qrcode` and
// barcodes with `bwip-js`, off the ingress's event loop.
import { setPriority } from 'node:os';
import { isMainThread } from 'node:worker_threads';
import bwipjs from 'bwip-js';
import QRCode from 'qrcode';
import type { BarcodeTask, QrTask, RenderResult, RenderTask } from './render-task.ts';
import { styledQrSvg } from './qr-style.ts';

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
  return { contentType: 'image/png', body: await QRCode.toBuffer(task.text, { ...options, type: 'png' }) };
}

async function barcode(task: BarcodeTask): Promise<RenderResult> {
  const options = {
    bcid: task.bcid,
    text: task.text,
    scale: task.scale,
    height: task.height,
    includetext: task.includeText,
    textxalign: 'center' as const,
    // White quiet zone and background: scanners need both.
    paddingwidth: 10,
    paddingheight: 6,
    backgroundcolor: 'FFFFFF',
    ...(task.bcid === 'gs1-128' ? { parsefnc: false } : {}),
  };
  if (task.format === 'svg') return { contentType: 'image/svg+xml', body: Buffer.from(bwipjs.toSVG(options)) };
  return { contentType: 'image/png', body: await bwipjs.toBuffer(options) };
}

// On Linux a thread can lower its own scheduling priority: rendering then takes the CPU the
// event loop (redirects) leaves free, instead of competing with it.
if (!isMainThread) {
  try {
    setPriority(10);
  } catch {
    // not permitted here: render at normal priority
  }
}

export default async function render(task: RenderTask): Promise<RenderResult> {
  return task.kind === 'qr' ? qr(task) : barcode(task);
}
