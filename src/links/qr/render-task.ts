// What the render pool is asked to draw, and what it answers.
import type { QrStyle } from './qr-style.ts';

export type ImageFormat = 'png' | 'svg';

export interface QrTask {
  kind: 'qr';
  text: string;
  format: ImageFormat;
  size: number;
  margin: number;
  errorCorrection: 'L' | 'M' | 'Q' | 'H';
  fgColor: string;
  bgColor: string;
  /** Styled output (SVG only). */
  style?: QrStyle;
}

export interface BarcodeTask {
  kind: 'barcode';
  /** bwip-js symbology id. */
  bcid: string;
  text: string;
  format: ImageFormat;
  scale: number;
  height: number;
  includeText: boolean;
}

export type RenderTask = QrTask | BarcodeTask;

export interface RenderResult {
  contentType: string;
  body: Uint8Array;
}

/** The renderer's refusal of its input (bwip-js's reason, e.g. a GS1 rule), answered as a 400, not thrown as a bug. */
export interface RenderRefusal {
  refused: string;
}
