// What the render pool is asked to draw, and what it answers.
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
