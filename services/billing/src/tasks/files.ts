import { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { parse } from 'csv-parse';
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

interface CsvRecord {
  record: Record<string, string>;
  raw: string;
  info: { lines: number };
}

async function* readCsv(source: AsyncIterable<Buffer>, allowed: ReadonlySet<string>): AsyncGenerator<ReadRow> {
  const skipped: ReadRow[] = [];
  let headerError: string | undefined;
  const parser = parse({
    bom: true,
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
    info: true,
    raw: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
  });
  parser.on('skip', (err: Error & { lines?: number }) => {
    skipped.push({ line: err.lines ?? 0, error: err.message.replace(/ on line \d+$/, '') });
  });
  const input = Readable.from(source);
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);
  try {
    for await (const rec of parser as AsyncIterable<CsvRecord>) {
      while (skipped.length > 0) yield skipped.shift() as ReadRow;
      const body = rec.raw.endsWith('\n') ? rec.raw.slice(0, -1) : rec.raw;
      const inner = body.split('\n').length - 1;
      const fields: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(rec.record)) if (v !== '') fields[k] = v;
      yield { line: rec.info.lines - inner, fields };
    }
  } catch (err) {
    if (headerError) throw new UnreadableFileError(headerError);
    if (err instanceof UnreadableFileError) throw err;
    throw new UnreadableFileError(`the CSV file could not be read: ${(err as Error).message}`);
  }
  while (skipped.length > 0) yield skipped.shift() as ReadRow;
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
