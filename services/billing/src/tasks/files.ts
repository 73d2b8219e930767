import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { parse, type Options } from 'csv-parse';
import { stringify } from 'csv-stringify/sync';
import type { TaskFileType } from '@billstream/contracts';
import { MAX_RECORD_BYTES, splitRecords } from './record-splitter';

/**
 * Reading and writing task files. CSV is read by csv-parse and written by csv-stringify (the
 * csv.js.org project: quoting, embedded commas, quotes and newlines, a BOM); JSONL is one JSON
 * object per line.
 */

/**
 * An exact decimal amount in a file (the tax report's major units, "-1.90"): written as its
 * digits, a negative one without the formula quote (it is a number, which a spreadsheet sums);
 * in JSONL a string.
 */
export class DecimalCell {
  constructor(readonly text: string) {
    if (!/^-?\d+(\.\d+)?$/.test(text)) throw new Error(`not a decimal: ${text}`);
  }

  toJSON(): string {
    return this.text;
  }
}

/**
 * Cells of a CSV row: objects and arrays are written as JSON strings, null and undefined as
 * empty, numbers stay numbers (csv-stringify's formula escaping leaves a negative number as it
 * is, see encodeRows), a DecimalCell as its digits, anything else as its string.
 */
function cell(v: unknown): string | number | DecimalCell {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number' || v instanceof DecimalCell) return v;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/**
 * csv-stringify's options for every CSV a task writes. `escape_formulas`: a text cell that
 * starts with `=`, `+`, `-`, `@`, a tab or a carriage return (or their full-width forms) is
 * written with a `'` in front, so that a spreadsheet shows it as text instead of running it as
 * a formula (OWASP, CSV injection); a number cell (an invoice's money, in minor units) is not
 * touched, a negative one included (ADR 0036).
 */
const CSV_OPTIONS = {
  record_delimiter: '\n',
  escape_formulas: true,
  cast: { object: (v: Record<string, unknown>) => (v instanceof DecimalCell ? { value: v.text, escape_formulas: false } : JSON.stringify(v)) },
} as const;

/**
 * The bytes of `rows` in the file type; a CSV's header row is written when `header` is set.
 * A JSONL line is the row as it is; a CSV column holds the row's field of the same name, or the
 * one `fields` names for it.
 */
export function encodeRows(
  fileType: TaskFileType,
  columns: readonly string[],
  rows: Array<Record<string, unknown>>,
  header: boolean,
  fields: Readonly<Record<string, string>> = {},
): Buffer {
  if (fileType === 'JSONL') {
    let text = '';
    for (const r of rows) text += `${JSON.stringify(r)}\n`;
    return Buffer.from(text);
  }
  const records: Array<Array<string | number | DecimalCell>> = rows.map((r) => columns.map((c) => cell(r[fields[c] ?? c])));
  if (header) records.unshift([...columns]);
  if (records.length === 0) return Buffer.alloc(0);
  return Buffer.from(stringify(records, CSV_OPTIONS));
}

/** One data row of an import: the 1-based line of the file where it starts, and its fields or why it could not be read. */
export type ReadRow = { line: number; fields: Record<string, unknown> } | { line: number; error: string };

/** The whole file could not be read (FAILED). */
export class UnreadableFileError extends Error {}

/**
 * The rows of an import file, read as a stream from `source` (one chunk in memory at a time).
 * A CSV row that cannot be parsed (a wrong number of cells, an unclosed quote), a JSONL line
 * that is not a JSON object, and a row or line over `maxRecordBytes` (skipped without being
 * held, RecordSplitter) are answered as error rows with their line; a CSV header with an
 * empty, repeated or unknown column, or over the cap, makes the whole file unreadable.
 */
export async function* readRows(
  fileType: TaskFileType,
  source: AsyncIterable<Buffer>,
  csvColumns: ReadonlySet<string>,
  maxRecordBytes = MAX_RECORD_BYTES,
): AsyncGenerator<ReadRow> {
  if (fileType === 'JSONL') {
    yield* readJsonl(source, maxRecordBytes);
    return;
  }
  yield* readCsv(source, csvColumns, maxRecordBytes);
}

/** Why a record over the cap was skipped unread. */
function overlong(what: string, maxRecordBytes: number): string {
  return `the ${what} is longer than ${maxRecordBytes} bytes, the most one ${what} of an import may take; it was skipped`;
}

function overlongHeader(maxRecordBytes: number): string {
  return `the CSV header (line 1) is longer than ${maxRecordBytes} bytes, the most one row of an import may take`;
}

/** The lines of a JSONL file, a line over the cap as an error without ever holding it. */
async function* jsonlLines(source: AsyncIterable<Buffer>, maxRecordBytes: number): AsyncGenerator<{ line: number; text: string } | { line: number; error: string }> {
  let line = 1;
  for await (const piece of splitRecords(source, false, maxRecordBytes)) {
    if (piece.kind === 'overlong') {
      yield { line, error: overlong('line', maxRecordBytes) };
      line += piece.breaks;
      continue;
    }
    // A piece ends with a line break, but the file's last one may not: whole UTF-8 characters either way.
    let start = 0;
    while (start < piece.bytes.length) {
      const nl = piece.bytes.indexOf(0x0a, start);
      const end = nl < 0 ? piece.bytes.length : nl;
      yield { line, text: piece.bytes.toString('utf8', start, end > start && piece.bytes[end - 1] === 0x0d ? end - 1 : end) };
      line += 1;
      start = end + 1;
    }
  }
}

async function* readJsonl(source: AsyncIterable<Buffer>, maxRecordBytes: number): AsyncGenerator<ReadRow> {
  for await (const read of jsonlLines(source, maxRecordBytes)) {
    if ('error' in read) {
      yield read;
      continue;
    }
    const { line } = read;
    const text = line === 1 ? read.text.replace(/^\uFEFF/, '') : read.text;
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      yield { line, error: `is not valid JSON: ${(err as Error).message}` };
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      yield { line, error: 'must be a JSON object' };
      continue;
    }
    yield { line, fields: value as Record<string, unknown> };
  }
}

/**
 * Counts the line breaks before a byte offset of a streamed file, for offsets that only grow
 * (the ends of parsed records): csv-parse's own line count is off after a CRLF inside a quoted
 * field, its byte count is exact. Holds only the bytes not yet passed.
 */
class LineCounter {
  private pieces: Buffer[] = [];
  private base = 0;
  private breaks = 0;

  add(piece: Buffer): void {
    this.pieces.push(piece);
  }

  /** Line breaks in bytes [0, offset). */
  before(offset: number): number {
    while (this.pieces.length > 0 && this.base < offset) {
      const piece = this.pieces[0];
      const take = Math.min(piece.length, offset - this.base);
      for (let i = 0; i < take; i += 1) if (piece[i] === 0x0a) this.breaks += 1;
      this.base += take;
      if (take === piece.length) this.pieces.shift();
      else this.pieces[0] = piece.subarray(take);
    }
    return this.breaks;
  }
}

const breaksIn = (text: string) => text.split('\n').length - 1;

/** A parsed row with the rows refused since the previous one, in file order. */
interface CsvRow {
  before: ReadRow[];
  row: ReadRow;
}

/** The file without its UTF-8 byte order mark. */
async function* withoutBom(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let first = true;
  for await (const chunk of source) {
    if (first && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) yield chunk.subarray(3);
    else yield chunk;
    first = false;
  }
}

/** What a CSV import cell that escape_formulas wrote (a `'` before `=`, `+`, `-`, `@`, tab, CR or their full-width forms) was. */
const ESCAPED_FORMULA = /^'[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

async function* readCsv(source: AsyncIterable<Buffer>, allowed: ReadonlySet<string>, maxRecordBytes: number): AsyncGenerator<ReadRow> {
  // on_record and 'skip' run as the parser reads, in file order: a refused row waits in
  // `skipped` and travels with the next parsed one.
  let skipped: ReadRow[] = [];
  let lastLine = 1;
  let headerError: string | undefined;
  const lines = new LineCounter();
  // A row over the cap reaches the parser as this one-cell line (and the line breaks it had),
  // so that its error takes its place in file order and the line count stays exact.
  const marker = `overlong-row-${randomBytes(16).toString('hex')}`;
  const tooLong = overlong('row', maxRecordBytes);
  /**
   * The line a record starts on: the line of its last byte (offset `end` - 1; a terminator
   * belongs to the line it ends) less the line breaks inside its quoted fields.
   */
  const startLine = (end: number, inner: number) => 1 + lines.before(end - 1) - inner;
  const parser = parse({
    columns: (header: string[]) => {
      const names = header.map((h) => h.trim());
      const seen = new Set<string>();
      for (const name of names) {
        if (name === marker) headerError = overlongHeader(maxRecordBytes);
        else if (name === '') headerError = 'the CSV header (line 1) has an empty column name';
        else if (seen.has(name)) headerError = `the CSV header (line 1) names the column ${name} twice`;
        else if (!allowed.has(name)) headerError = `the CSV header (line 1) has an unknown column ${name}; the columns are ${[...allowed].join(', ')}`;
        seen.add(name);
      }
      if (headerError) throw new UnreadableFileError(headerError);
      return names;
    },
    raw: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    on_record: (rec: { record: Record<string, string>; raw: string }, ctx: { bytes: number }): CsvRow => {
      const values = Object.values(rec.record);
      const inner = values.reduce((n, v) => n + breaksIn(v), 0);
      const line = startLine(ctx.bytes, inner);
      lastLine = line + inner;
      const before = skipped;
      skipped = [];
      if (values.length === 1 && values[0] === marker) return { before, row: { line, error: tooLong } };
      const fields: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(rec.record)) if (v !== '') fields[k] = v.replace(ESCAPED_FORMULA, (m) => m.slice(1));
      return { before, row: { line, fields } };
    },
  } as unknown as Options);
  parser.on('skip', (err: Error & { code?: string; bytes?: number; raw?: string }) => {
    const refused = err.code === 'CSV_RECORD_INCONSISTENT_COLUMNS' && err.bytes !== undefined && err.raw !== undefined;
    const message = refused && err.raw!.trimEnd() === marker ? tooLong : err.message.replace(/ on line \d+$/, '');
    // An unclosed quote runs to the end of the file: it starts on the line after the last record.
    // (csv-parse's byte count of a refused row may stop before its terminator: never before the line after the last row.)
    // (Its raw text starts with the blank lines skipped before it and ends with its terminator: neither is inside it.)
    const inner = refused ? breaksIn(err.raw!.replace(/^[\r\n]+/, '').replace(/\r?\n$/, '')) : 0;
    const line = refused ? Math.max(startLine(err.bytes!, inner), lastLine + 1) : lastLine + 1;
    lastLine = Math.max(lastLine, line);
    skipped.push({ line, error: message });
  });
  async function* fed(): AsyncGenerator<Buffer> {
    for await (const piece of splitRecords(withoutBom(source), true, maxRecordBytes)) {
      if (piece.kind === 'overlong' && piece.line === 1) throw new UnreadableFileError(overlongHeader(maxRecordBytes));
      const bytes = piece.kind === 'records' ? piece.bytes : Buffer.from(`${marker}\n${'\n'.repeat(Math.max(0, piece.breaks - 1))}`);
      lines.add(bytes);
      yield bytes;
    }
  }
  const input = Readable.from(fed());
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);
  try {
    for await (const parsed of parser as AsyncIterable<CsvRow>) {
      yield* parsed.before;
      yield parsed.row;
    }
  } catch (err) {
    if (headerError) throw new UnreadableFileError(headerError);
    if (err instanceof UnreadableFileError) throw err;
    throw new UnreadableFileError(`the CSV file could not be read: ${(err as Error).message}`);
  }
  yield* skipped;
}

/** A JSON-string cell of a CSV (properties, metadata) as its value; JSONL values pass as they are. */
export function jsonCell(fileType: TaskFileType, value: unknown, column: string): { value?: unknown; error?: string } {
  if (fileType === 'JSONL' || typeof value !== 'string') return { value };
  try {
    return { value: JSON.parse(value) };
  } catch {
    return { error: `${column} must be a JSON object written as a string` };
  }
}
