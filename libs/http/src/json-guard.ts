import { ValidationError } from '@billstream/errors';

/**
 * Deepest nesting of objects and arrays a JSON body may have; the body itself is level 1
 * (docs/api.md). JSON.parse copes with far more, but Postgres' jsonb and any recursive
 * reader of the value should never meet a hostile depth.
 */
export const MAX_JSON_DEPTH = 64;

/** NUL, and a UTF-16 surrogate without its pair: neither can be stored as Postgres text or jsonb. */
// eslint-disable-next-line no-control-regex -- NUL is what this looks for
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function isSurrogateEscapeStart(d: number, h: number): boolean {
  // `\uD8..` to `\uDF..`: d or D, then 8, 9, a..f or A..F.
  return (d === 0x64 || d === 0x44) && ((h >= 0x38 && h <= 0x39) || (h >= 0x61 && h <= 0x66) || (h >= 0x41 && h <= 0x46));
}

/**
 * Whether raw UTF-8 JSON text may decode to a NUL or a surrogate. Both can only come from a
 * `\u0000` or `\uD800`-`\uDFFF` escape (JSON forbids a raw NUL, and UTF-8 decoding replaces
 * encoded surrogates), so text without such an escape needs no string scan at all. A false
 * positive (`\\u0000`, a valid escaped pair) only costs the exact scan.
 */
export function mayHoldUnstorableText(utf8: Buffer): boolean {
  let at = utf8.indexOf('\\u');
  while (at !== -1) {
    const a = utf8[at + 2];
    const b = utf8[at + 3];
    if (a === 0x30 && b === 0x30 && utf8[at + 4] === 0x30 && utf8[at + 5] === 0x30) return true;
    if (isSurrogateEscapeStart(a, b)) return true;
    at = utf8.indexOf('\\u', at + 2);
  }
  return false;
}

/** A string's bad code units written as `\uXXXX`, so that a field name can be shown safely. */
function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what this escapes
  return text.replace(/[\u0000-\u001f\ud800-\udfff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Any NUL or surrogate at all: a cheap test that rules out almost every string. */
// eslint-disable-next-line no-control-regex -- NUL is what this looks for
const SUSPECT = /[\u0000\ud800-\udfff]/;

function problemOf(text: string): string | undefined {
  if (!SUSPECT.test(text)) return undefined;
  const m = UNSTORABLE.exec(text);
  if (!m) return undefined;
  return m[0] === '\u0000' ? 'must not contain NUL characters (\\u0000)' : 'must not contain unpaired UTF-16 surrogates (\\ud800-\\udfff)';
}

interface Node {
  value: unknown;
  depth: number;
  parent?: Node;
  key?: string;
}

function pathOf(node: Node | undefined, key?: string): string {
  const parts: string[] = key === undefined ? [] : [printable(key)];
  for (let n = node; n && n.key !== undefined; n = n.parent) parts.push(printable(n.key));
  return parts.reverse().join('.');
}

function refuse(field: string, message: string, what: string): ValidationError {
  return new ValidationError(field ? `${what} is invalid: ${field} ${message}` : `${what} is invalid: ${message}`, {
    field,
    issues: [{ field, message }],
  });
}

/**
 * Refuses a parsed JSON value that Postgres cannot store or that nests deeper than
 * `maxDepth`: a ValidationError whose `details.field` is the dotted path of the first bad
 * string, key or container (`events.3.properties.name`). Iterative, so that no depth can
 * overflow the stack. `checkStrings: false` skips the string scan (see `mayHoldUnstorableText`).
 */
export function assertStorableJson(
  value: unknown,
  { checkStrings = true, maxDepth = MAX_JSON_DEPTH, what = 'Body' }: { checkStrings?: boolean; maxDepth?: number; what?: string } = {},
): void {
  if (typeof value !== 'object' || value === null) {
    const problem = checkStrings && typeof value === 'string' ? problemOf(value) : undefined;
    if (problem) throw refuse('', problem, what);
    return;
  }
  // Only objects and arrays are pushed; strings are checked where they are met.
  const stack: Node[] = [{ value, depth: 1 }];
  while (stack.length > 0) {
    const node = stack.pop() as Node;
    if (node.depth > maxDepth) throw refuse(pathOf(node), `is nested deeper than ${maxDepth} levels of objects and arrays`, what);
    const v = node.value as Record<string, unknown> | unknown[];
    const keys = Array.isArray(v) ? undefined : Object.keys(v);
    const count = keys ? keys.length : (v as unknown[]).length;
    for (let i = count - 1; i >= 0; i--) {
      const key = keys ? keys[i] : String(i);
      if (keys && checkStrings) {
        const problem = problemOf(key);
        if (problem) throw refuse(pathOf(node, key), `(a key) ${problem}`, what);
      }
      const child = keys ? (v as Record<string, unknown>)[key] : (v as unknown[])[i];
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: node.depth + 1, parent: node, key });
      else if (checkStrings && typeof child === 'string') {
        const problem = problemOf(child);
        if (problem) throw refuse(pathOf(node, key), problem, what);
      }
    }
  }
}
