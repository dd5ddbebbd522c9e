import { GLYPH_HEIGHT, GLYPH_WIDTH, glyphRows } from './font.js';
import { encodePng } from './png.js';

export type Rgb = readonly [number, number, number];

/** An RGB raster with the few primitives a line chart needs. */
export class Canvas {
  readonly data: Uint8Array;

  constructor(
    readonly width: number,
    readonly height: number,
    background: Rgb = [255, 255, 255],
  ) {
    this.data = new Uint8Array(width * height * 3);
    this.fillRect(0, 0, width, height, background);
  }

  setPixel(x: number, y: number, color: Rgb): void {
    const px = Math.round(x);
    const py = Math.round(y);
    if (px < 0 || py < 0 || px >= this.width || py >= this.height) return;
    const offset = (py * this.width + px) * 3;
    this.data[offset] = color[0];
    this.data[offset + 1] = color[1];
    this.data[offset + 2] = color[2];
  }

  fillRect(x: number, y: number, w: number, h: number, color: Rgb): void {
    for (let row = Math.max(0, Math.round(y)); row < Math.min(this.height, Math.round(y + h)); row++) {
      for (let col = Math.max(0, Math.round(x)); col < Math.min(this.width, Math.round(x + w)); col++) this.setPixel(col, row, color);
    }
  }

  /** A straight line `thickness` pixels wide; `dash` draws on/off segments of that many pixels. */
  line(x0: number, y0: number, x1: number, y1: number, color: Rgb, thickness = 1, dash = 0): void {
    const steps = Math.max(1, Math.ceil(Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0))));
    const half = (thickness - 1) / 2;
    for (let i = 0; i <= steps; i++) {
      if (dash > 0 && Math.floor(i / dash) % 2 === 1) continue;
      const x = x0 + ((x1 - x0) * i) / steps;
      const y = y0 + ((y1 - y0) * i) / steps;
      this.fillRect(x - half, y - half, thickness, thickness, color);
    }
  }

  /** Draws text with the 5x7 font at `scale`; `align` is relative to x. Returns the text width. */
  text(x: number, y: number, text: string, color: Rgb, scale = 2, align: 'left' | 'center' | 'right' = 'left'): number {
    const width = text.length * (GLYPH_WIDTH + 1) * scale - scale;
    let left = align === 'left' ? x : align === 'center' ? x - width / 2 : x - width;
    for (const char of text) {
      const rows = glyphRows(char);
      for (let row = 0; row < GLYPH_HEIGHT; row++) {
        for (let col = 0; col < GLYPH_WIDTH; col++) {
          if (((rows[row] ?? 0) >> (GLYPH_WIDTH - 1 - col)) & 1) this.fillRect(left + col * scale, y + row * scale, scale, scale, color);
        }
      }
      left += (GLYPH_WIDTH + 1) * scale;
    }
    return width;
  }

  toPng(): Buffer {
    return encodePng(this.width, this.height, this.data);
  }
}
