// Styled QR codes, drawn as SVG from the code's module matrix (qrcode builds
// the matrix at error-correction level H, which leaves room for the styling).
// What can be styled: module shapes, the finder "eyes" (frame and ball
// separately), colours or a gradient, a circular code with decorative modules
// around the symbol, and a ring frame with text. The symbol itself keeps its
// quiet zone and dark-on-light contrast, so it scans (checked in the tests by
// decoding every combination).
import QRCode from 'qrcode';

export type ModuleShape = 'square' | 'dots' | 'rounded';
export type EyeShape = 'square' | 'rounded' | 'circle';

export interface QrStyle {
  moduleShape?: ModuleShape;
  eyeFrameShape?: EyeShape;
  eyeBallShape?: EyeShape;
  fgColor?: string;
  bgColor?: string;
  eyeColor?: string;
  gradient?: { type: 'linear' | 'radial'; from: string; to: string; rotation?: number };
  qrShape?: 'square' | 'circle';
  ringText?: string;
  ringColor?: string;
  ringTextColor?: string;
  /** A silhouette filled with decorative modules around the symbol (Pro and Enterprise). */
  mask?: MaskShape;
  /** Halftone art (Pro and Enterprise): a picture under the symbol, the modules reduced to marks at their centres. */
  halftone?: { image: string; opacity?: number };
}

export const MASK_SHAPES = ['circle', 'heart', 'star', 'hexagon'] as const;
export type MaskShape = (typeof MASK_SHAPES)[number];

const STAR_SECTOR = (2 * Math.PI) / 5;
const STAR_INNER = 0.5;

/** Whether a point (in units of the shape's half-width, centred on 0,0, y down) lies inside the silhouette. */
function insideMask(shape: MaskShape, x: number, y: number): boolean {
  switch (shape) {
    case 'circle':
      return x * x + y * y <= 1;
    case 'hexagon':
      return Math.abs(y) <= 0.866 && Math.abs(x) * 0.866 + Math.abs(y) * 0.5 <= 0.866;
    case 'heart': {
      // The classic heart curve (x² + y² − 1)³ − x²y³ ≤ 0, y up, scaled to fit in ±1.
      const X = x * 1.25;
      const Y = -y * 1.25 + 0.25;
      return (X * X + Y * Y - 1) ** 3 - X * X * Y ** 3 <= 0;
    }
    case 'star': {
      // A five-pointed star, one point up: outer radius 1, inner 0.5 (a regular star's 0.38 would
      // leave too little room for the symbol). By symmetry the angle from the nearest point, 0–36°,
      // decides; inside is the origin's side of the edge from that point to the inner vertex.
      const r = Math.hypot(x, y);
      const fromUp = ((Math.atan2(x, -y) % STAR_SECTOR) + STAR_SECTOR) % STAR_SECTOR;
      const a = Math.min(fromUp, STAR_SECTOR - fromUp);
      const [u, v] = [r * Math.sin(a), r * Math.cos(a)];
      const [qu, qv] = [STAR_INNER * Math.sin(STAR_SECTOR / 2), STAR_INNER * Math.cos(STAR_SECTOR / 2)];
      return qu * (v - 1) - (qv - 1) * u <= 0;
    }
  }
}

const escapeXml = (s: string) => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
const n2 = (x: number) => Number(x.toFixed(3));

/** Relative luminance of #rrggbb (WCAG). */
export function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

/** WCAG contrast ratio of a dark colour on a light one (below 1 when the "dark" one is lighter). */
export const contrast = (dark: string, light: string) => (luminance(light) + 0.05) / (luminance(dark) + 0.05);

/** Dark colours the style puts on the background (modules, gradient stops, eyes). */
export const darkColors = (style: QrStyle): string[] =>
  [style.gradient ? [style.gradient.from, style.gradient.to] : [style.fgColor ?? '#000000'], style.eyeColor ? [style.eyeColor] : []].flat();

/** A small deterministic random generator, so the same link always gets the same decoration. */
function seeded(text: string): () => number {
  let h = 2166136261;
  for (const ch of text) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return () => {
    h = Math.imul(h ^ (h >>> 15), 2246822507);
    h = Math.imul(h ^ (h >>> 13), 3266489909);
    return ((h ^= h >>> 16) >>> 0) / 4294967296;
  };
}

function moduleSvg(x: number, y: number, shape: ModuleShape): string {
  switch (shape) {
    case 'square': return `<rect x="${x}" y="${y}" width="1.02" height="1.02"/>`;
    case 'dots': return `<circle cx="${x + 0.5}" cy="${y + 0.5}" r="0.45"/>`;
    case 'rounded': return `<rect x="${x + 0.05}" y="${y + 0.05}" width="0.9" height="0.9" rx="0.3"/>`;
  }
}

/** The centre mark of a halftone module (a third of the module is enough for scanners). */
function halftoneMark(x: number, y: number, shape: ModuleShape): string {
  return shape === 'dots' ? `<circle cx="${x + 0.5}" cy="${y + 0.5}" r="0.25"/>` : `<rect x="${x + 0.3}" y="${y + 0.3}" width="0.4" height="0.4"/>`;
}

/** A finder pattern at (x, y): a 7×7 frame one module thick and a 3×3 ball. */
function eyeSvg(x: number, y: number, frame: EyeShape, ball: EyeShape, fill: string): string {
  // A "circle" frame is a near-circle: a square with corners rounded to 0.8 of its half side. zbar
  // fits straight lines to a finder's outer edges and cannot read a true circle (tested).
  const [outer, inner] = { square: [0, 0], rounded: [2, 1.2], circle: [2.8, 1.8] }[frame];
  const frameSvg = `<path fill-rule="evenodd" fill="${fill}" d="${roundedRectPath(x, y, 7, outer!)} ${roundedRectPath(x + 1, y + 1, 5, inner!)}"/>`;
  const ballSvg =
    ball === 'circle'
      ? `<circle cx="${x + 3.5}" cy="${y + 3.5}" r="1.5" fill="${fill}"/>`
      : `<rect x="${x + 2}" y="${y + 2}" width="3" height="3" rx="${ball === 'rounded' ? 0.8 : 0}" fill="${fill}"/>`;
  return frameSvg + ballSvg;
}

function roundedRectPath(x: number, y: number, s: number, r: number): string {
  if (r === 0) return `M${x} ${y}h${s}v${s}h${-s}z`;
  return `M${x + r} ${y}h${s - 2 * r}a${r} ${r} 0 0 1 ${r} ${r}v${s - 2 * r}a${r} ${r} 0 0 1 ${-r} ${r}h${-(s - 2 * r)}a${r} ${r} 0 0 1 ${-r} ${-r}v${-(s - 2 * r)}a${r} ${r} 0 0 1 ${r} ${-r}z`;
}

export function styledQrSvg(text: string, options: { size: number; margin: number; style: QrStyle }): string {
  const { style } = options;
  const qr = QRCode.create(text, { errorCorrectionLevel: 'H' });
  const n = qr.modules.size;
  const quiet = Math.max(options.margin, style.qrShape === 'circle' ? 2 : 0);
  const moduleShape = style.moduleShape ?? 'square';
  const fg = style.gradient ? 'url(#fg)' : (style.fgColor ?? '#000000');
  const bg = style.bgColor ?? '#ffffff';
  const eyeFill = style.eyeColor ?? fg;
  const inEye = (r: number, c: number) => (r < 7 && c < 7) || (r < 7 && c >= n - 7) || (r >= n - 7 && c < 7);

  // Geometry in module units: the symbol and its quiet zone form a square of side `box`;
  // a circular code is the circle around that square, filled outside it with decoration.
  const box = n + 2 * quiet;
  const circle = style.qrShape === 'circle';
  // A ring frame goes around the whole square too, so it needs the circumscribed circle as well.
  const mask: MaskShape | undefined = style.mask ?? (circle ? 'circle' : undefined);
  let radius = circle || style.ringText ? Math.ceil((box / 2) * Math.SQRT2) + 1 : box / 2;
  if (mask && mask !== 'circle') {
    // Grow the silhouette until the whole symbol with its quiet zone sits inside it: every point of
    // the square's edge, every half module (a star's or heart's edge bends inwards between corners).
    const edge: [number, number][] = [];
    for (let t = -box / 2; t <= box / 2; t += 0.5) edge.push([t, -box / 2], [t, box / 2], [-box / 2, t], [box / 2, t]);
    while (!edge.every(([ex, ey]) => insideMask(mask, ex / radius, ey / radius))) radius += 0.5;
    radius = Math.ceil(radius) + 1;
  }
  const ringWidth = style.ringText ? 4 : 0;
  const total = 2 * (radius + ringWidth);
  const offset = total / 2 - n / 2; // where module (0, 0) sits
  const center = total / 2;

  const parts: string[] = [];
  // Halftone: every module shows the picture, except a mark at its centre, dark or light, which is
  // where scanners sample it; function patterns are drawn whole, in the module shape.
  const lightParts: string[] = [];
  if (style.halftone) {
    for (let r = 0; r < n; r++) {
      for (let c = 0; c < n; c++) {
        if (inEye(r, c)) continue;
        const x = n2(offset + c);
        const y = n2(offset + r);
        const mark = qr.modules.isReserved(r, c) ? moduleSvg(x, y, moduleShape) : halftoneMark(x, y, moduleShape);
        (qr.modules.get(r, c) ? parts : lightParts).push(mark);
      }
    }
  }
  for (let r = 0; r < n && !style.halftone; r++) {
    for (let c = 0; c < n; c++) {
      // Every module but the finder eyes takes the shape, timing, alignment, format and version
      // information included (scanners sample module centres; squares among dots look broken).
      if (qr.modules.get(r, c) && !inEye(r, c)) parts.push(moduleSvg(n2(offset + c), n2(offset + r), moduleShape));
    }
  }
  if (mask) {
    // Decorative modules between the quiet zone and the edge of the silhouette.
    const random = seeded(text);
    const first = Math.floor(center - radius);
    const last = Math.ceil(center + radius);
    const boxStart = offset - quiet;
    const boxEnd = offset + n + quiet;
    for (let y = first; y < last; y++) {
      for (let x = first; x < last; x++) {
        const inBox = x + 1 > boxStart && x < boxEnd && y + 1 > boxStart && y < boxEnd;
        const inside = insideMask(mask, (x + 0.5 - center) / (radius - 0.8), (y + 0.5 - center) / (radius - 0.8));
        if (!inBox && inside && random() < 0.45) parts.push(moduleSvg(x, y, moduleShape));
      }
    }
  }

  const gradient = style.gradient
    ? style.gradient.type === 'linear'
      ? `<linearGradient id="fg" gradientUnits="userSpaceOnUse" x1="0" y1="0" x2="${total}" y2="0" gradientTransform="rotate(${style.gradient.rotation ?? 45} ${center} ${center})"><stop offset="0" stop-color="${style.gradient.from}"/><stop offset="1" stop-color="${style.gradient.to}"/></linearGradient>`
      : `<radialGradient id="fg" gradientUnits="userSpaceOnUse" cx="${center}" cy="${center}" r="${radius}"><stop offset="0" stop-color="${style.gradient.from}"/><stop offset="1" stop-color="${style.gradient.to}"/></radialGradient>`
    : '';
  const ring = style.ringText
    ? `<path id="ring" d="M ${center - radius - ringWidth / 2} ${center} a ${radius + ringWidth / 2} ${radius + ringWidth / 2} 0 1 1 ${2 * radius + ringWidth} 0 a ${radius + ringWidth / 2} ${radius + ringWidth / 2} 0 1 1 ${-(2 * radius + ringWidth)} 0"/>`
    : '';
  // A silhouette's outside stays transparent; the symbol and its quiet zone always get the background.
  const background = mask && mask !== 'circle' && !style.ringText
    ? `<rect x="${n2(offset - quiet)}" y="${n2(offset - quiet)}" width="${box}" height="${box}" fill="${bg}"/>`
    : circle || style.ringText
    ? `<circle cx="${center}" cy="${center}" r="${radius + ringWidth}" fill="${style.ringText ? (style.ringColor ?? '#000000') : bg}"/>${style.ringText ? `<circle cx="${center}" cy="${center}" r="${radius}" fill="${bg}"/>` : ''}`
    : `<rect width="${total}" height="${total}" fill="${bg}"/>`;
  const ringTextSvg = style.ringText
    ? `<text font-family="Helvetica, Arial, sans-serif" font-size="2.2" font-weight="bold" letter-spacing="0.3" fill="${style.ringTextColor ?? '#ffffff'}" dominant-baseline="central"><textPath href="#ring" startOffset="25%" text-anchor="middle">${escapeXml(style.ringText)}</textPath></text>`
    : '';
  const picture = style.halftone
    ? `<image href="${style.halftone.image}" x="${n2(offset)}" y="${n2(offset)}" width="${n}" height="${n}" preserveAspectRatio="xMidYMid slice" opacity="${style.halftone.opacity ?? 1}"/><g fill="${bg}">${lightParts.join('')}</g>`
      + [[offset, offset], [offset + n - 8, offset], [offset, offset + n - 8]].map(([x, y]) => `<rect x="${n2(x!)}" y="${n2(y!)}" width="8" height="8" fill="${bg}"/>`).join('')
    : '';
  const eyes = [
    [offset, offset],
    [offset + n - 7, offset],
    [offset, offset + n - 7],
  ]
    .map(([x, y]) => eyeSvg(n2(x!), n2(y!), style.eyeFrameShape ?? 'square', style.eyeBallShape ?? 'square', eyeFill))
    .join('');

  return `<svg xmlns="http://www.w3.org/2000/svg" width="${options.size}" height="${options.size}" viewBox="0 0 ${n2(total)} ${n2(total)}" shape-rendering="${moduleShape === 'square' ? 'crispEdges' : 'geometricPrecision'}"><defs>${gradient}${ring}</defs>${background}${ringTextSvg}${picture}<g fill="${fg}">${parts.join('')}</g>${eyes}</svg>`;
}
