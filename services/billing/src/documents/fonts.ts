import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as fontkit from 'fontkit';

/**
 * The fonts embedded in invoice PDFs (ADR 0045): Noto Sans (Latin, Cyrillic, Greek) of
 * @embedpdf/fonts-latin and Noto Sans Hans (CJK ideographs, kana) of @embedpdf/fonts-sc, read
 * from node_modules on first use and kept; pdfkit embeds only the glyphs a document uses.
 */
export type FontName = 'sans' | 'sans-bold' | 'cjk';

const FILES: Record<FontName, [pkg: string, file: string]> = {
  sans: ['@embedpdf/fonts-latin', 'NotoSans-Regular.ttf'],
  'sans-bold': ['@embedpdf/fonts-latin', 'NotoSans-Bold.ttf'],
  cjk: ['@embedpdf/fonts-sc', 'NotoSansHans-Regular.otf'],
};

const loaded = new Map<FontName, { bytes: Buffer; font: fontkit.Font }>();

/** The package's main is dist/index.*; its fonts are in fonts/ beside dist/ (no export names the files). */
function fontPath(pkg: string, file: string): string {
  return path.join(path.dirname(require.resolve(pkg)), '..', 'fonts', file);
}

export function fontOf(name: FontName): { bytes: Buffer; font: fontkit.Font } {
  let f = loaded.get(name);
  if (!f) {
    const [pkg, file] = FILES[name];
    const bytes = readFileSync(fontPath(pkg, file));
    f = { bytes, font: fontkit.create(bytes) };
    loaded.set(name, f);
  }
  return f;
}

/**
 * `text` cut into runs, each of the font that has its glyphs: the Latin font (regular or bold)
 * where it has the glyph, else the CJK font where that has it, else the Latin font.
 */
export function fontRuns(text: string, latin: 'sans' | 'sans-bold'): Array<{ font: FontName; text: string }> {
  const runs: Array<{ font: FontName; text: string }> = [];
  const base = fontOf(latin).font;
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    // Spaces and punctuation the Latin font has stay in the run they are in.
    const font: FontName = base.hasGlyphForCodePoint(cp) ? latin : fontOf('cjk').font.hasGlyphForCodePoint(cp) ? 'cjk' : latin;
    const last = runs.at(-1);
    if (last && (last.font === font || (ch === ' ' && last.font === 'cjk'))) last.text += ch;
    else runs.push({ font, text: ch });
  }
  return runs;
}
