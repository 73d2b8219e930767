/** The part of fontkit (pdfkit's font engine) documents/ uses: which font has a glyph. */
declare module 'fontkit' {
  export interface Font {
    hasGlyphForCodePoint(codePoint: number): boolean;
  }
  export function create(buffer: Buffer): Font;
}
