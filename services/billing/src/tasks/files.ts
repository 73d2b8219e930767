import { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { parse, type Options } from 'csv-parse';
import { stringify } from 'csv-stringify/sync';
import type { TaskFileType } from '@billstream/contracts';

/**
 * Reading and writing task files. CSV is read by csv-parse and written by csv-stringify (the
 * csv.js.org project: quoting, embedded commas, quotes and newlines, a BOM); JSONL is one JSON
 * object per line.
 */

/** Cells of a CSV row: objects and arrays are written as JSON strings, null and undefined as empty. */
function cell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** The bytes of `rows` in the file type; a CSV's header row is written when `header` is set. */
export function encodeRows(fileType: TaskFileType, columns: readonly string[], rows: Array<Record<string, unknown>>, header: boolean): Buffer {
  if (fileType === 'JSONL') {
    let text = '';
    for (const r of rows) text += `${JSON.stringify(r)}\n`;
    return Buffer.from(text);
  }
  const records = rows.map((r) => columns.map((c) => cell(r[c])));
  if (header) records.unshift([...columns]);
  if (records.length === 0) return Buffer.alloc(0);
  return Buffer.from(stringify(records, { record_delimiter: '\n' }));
}

/** One data row of an import: the 1-based line of the file where it starts, and its fields or why it could not be read. */
export type ReadRow = { line: number; fields: Record<string, unknown> } | { line: number; error: string };

/** The whole file could not be read (FAILED). */
export class UnreadableFileError extends Error {}

/**
 * The rows of an import file, read as a stream from `source` (one chunk in memory at a time).
 * A CSV row that cannot be parsed (a wrong number of cells, an unclosed quote) or a JSONL line
 * that is not a JSON object is answered as an error row with its line; a CSV header with an
 * empty, repeated or unknown column makes the whole file unreadable.
 */
export async function* readRows(fileType: TaskFileType, source: AsyncIterable<Buffer>, csvColumns: ReadonlySet<string>): AsyncGenerator<ReadRow> {
  if (fileType === 'JSONL') {
    yield* readJsonl(source);
    return;
  }
  yield* readCsv(source, csvColumns);
}

async function* readJsonl(source: AsyncIterable<Buffer>): AsyncGenerator<ReadRow> {
  const lines = createInterface({ input: Readable.from(source), crlfDelay: Infinity });
  let line = 0;
  for await (const raw of lines) {
    line += 1;
    const text = line === 1 ? raw.replace(/^\uFEFF/, '') : raw;
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
  line: number;
  record: Record<string, string>;
}

async function* readCsv(source: AsyncIterable<Buffer>, allowed: ReadonlySet<string>): AsyncGenerator<ReadRow> {
  // on_record and 'skip' run as the parser reads, in file order: a refused row waits in
  // `skipped` and travels with the next parsed one.
  let skipped: ReadRow[] = [];
  let lastLine = 1;
  let headerError: string | undefined;
  const lines = new LineCounter();
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
        if (name === '') headerError = 'the CSV header (line 1) has an empty column name';
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
      const inner = Object.values(rec.record).reduce((n, v) => n + breaksIn(v), 0);
      const line = startLine(ctx.bytes, inner);
      lastLine = line + inner;
      const before = skipped;
      skipped = [];
      return { before, line, record: rec.record };
    },
  } as unknown as Options);
  parser.on('skip', (err: Error & { code?: string; bytes?: number; raw?: string }) => {
    const message = err.message.replace(/ on line \d+$/, '');
    // An unclosed quote runs to the end of the file: it starts on the line after the last record.
    // (csv-parse's byte count of a refused row may stop before its terminator: never before the line after the last row.)
    const line =
      err.code === 'CSV_RECORD_INCONSISTENT_COLUMNS' && err.bytes !== undefined && err.raw !== undefined
        ? Math.max(startLine(err.bytes, breaksIn(err.raw)), lastLine + 1)
        : lastLine + 1;
    lastLine = Math.max(lastLine, line);
    skipped.push({ line, error: message });
  });
  let first = true;
  async function* fed(): AsyncGenerator<Buffer> {
    for await (const chunk of source) {
      let piece = chunk;
      if (first) {
        first = false;
        if (piece[0] === 0xef && piece[1] === 0xbb && piece[2] === 0xbf) piece = piece.subarray(3);
      }
      lines.add(piece);
      yield piece;
    }
  }
  const input = Readable.from(fed());
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);
  try {
    for await (const row of parser as AsyncIterable<CsvRow>) {
      yield* row.before;
      const fields: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(row.record)) if (v !== '') fields[k] = v;
      yield { line: row.line, fields };
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
