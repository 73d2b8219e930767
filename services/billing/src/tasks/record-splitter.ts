/** The most one record of an import file (a JSONL line, a CSV row) may take, without its line break. */
export const MAX_RECORD_BYTES = 1024 * 1024;

/**
 * What the splitter passes on, in file order: bytes of whole records (each at most the cap;
 * the last piece of a file may end without a line break), or a record that was over the cap,
 * dropped, with the line it starts on and the line breaks it spanned (its own included).
 */
export type SplitPiece = { kind: 'records'; bytes: Buffer } | { kind: 'overlong'; line: number; breaks: number };

const NL = 0x0a;
const QUOTE = 0x22;
const COMMA = 0x2c;

/**
 * Cuts a streamed import file at record boundaries and drops records over `maxBytes` without
 * ever holding them: it keeps only the unfinished record at the end of the chunks seen so far,
 * and once that passes the cap it forgets it and skips the rest up to the record's end. So it
 * never holds more than the cap plus one chunk, however long a line.
 *
 * A record ends at a line break (`\n`; a `\r` before it belongs to the record). With `csv`,
 * a line break inside a quoted field does not end the record (RFC 4180, as csv-parse reads
 * it): a quote opens a quoted field at the start of a field, `""` inside is a quote, and a
 * quote followed by anything else closes it.
 */
export class RecordSplitter {
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** Bytes of the current record so far (held or in the chunk being read). */
  private recordBytes = 0;
  /** Line breaks inside the current record so far. */
  private recordBreaks = 0;
  /** The 1-based line the current record starts on. */
  private recordLine = 1;
  private dropping = false;
  private quoted = false;
  private quoteSeen = false;
  private fieldStart = true;

  constructor(
    private readonly maxBytes = MAX_RECORD_BYTES,
    private readonly csv = false,
  ) {}

  /** Bytes held now: the unfinished record's (tests check it stays under the cap). */
  get heldNow(): number {
    return this.heldBytes;
  }

  /** The pieces a chunk completes, in order. */
  push(chunk: Buffer): SplitPiece[] {
    const out: SplitPiece[] = [];
    // chunk[from, recordStart) are whole records not passed on yet (after the held bytes, whose
    // record they complete); chunk[recordStart, ...) is the current record.
    let from = 0;
    let recordStart = 0;
    for (let i = 0; i < chunk.length; i += 1) {
      const b = chunk[i];
      const ends = this.step(b);
      if (ends) {
        if (this.dropping) {
          out.push({ kind: 'overlong', line: this.recordLine, breaks: this.recordBreaks + 1 });
          from = i + 1;
        }
        this.nextRecord(this.recordLine + this.recordBreaks + 1);
        recordStart = i + 1;
        continue;
      }
      if (b === NL) this.recordBreaks += 1;
      if (this.dropping) continue;
      this.recordBytes += 1;
      if (this.recordBytes > this.maxBytes) {
        // The current record is over the cap: pass on the whole records before it, forget it.
        this.emit(out, chunk.subarray(from, recordStart));
        this.held = [];
        this.heldBytes = 0;
        this.dropping = true;
      }
    }
    if (this.dropping) return out;
    this.emit(out, chunk.subarray(from, recordStart));
    // A copy: a view would keep the whole chunk in memory for a few bytes of it.
    const rest = Buffer.from(chunk.subarray(recordStart));
    if (rest.length > 0) {
      this.held.push(rest);
      this.heldBytes += rest.length;
    }
    return out;
  }

  /** The end of the file: its last record (no line break after it), whole or dropped. */
  end(): SplitPiece[] {
    if (this.dropping) {
      const last: SplitPiece = { kind: 'overlong', line: this.recordLine, breaks: this.recordBreaks };
      this.nextRecord(this.recordLine + this.recordBreaks);
      return [last];
    }
    const out: SplitPiece[] = [];
    if (this.heldBytes > 0) out.push({ kind: 'records', bytes: Buffer.concat(this.held) });
    this.held = [];
    this.heldBytes = 0;
    return out;
  }

  /** Passes on whole records: the held bytes (the start of the first of them) and `tail`; nothing when `tail` is empty (no record ended). */
  private emit(out: SplitPiece[], tail: Buffer): void {
    if (tail.length === 0) return;
    const bytes = this.heldBytes > 0 ? Buffer.concat([...this.held, tail]) : tail;
    this.held = [];
    this.heldBytes = 0;
    out.push({ kind: 'records', bytes });
  }

  private nextRecord(line: number): void {
    this.recordLine = line;
    this.recordBytes = 0;
    this.recordBreaks = 0;
    this.dropping = false;
    this.quoted = false;
    this.quoteSeen = false;
    this.fieldStart = true;
  }

  /** Reads one byte; true when it is the line break that ends the current record. */
  private step(b: number): boolean {
    if (!this.csv) return b === NL;
    if (this.quoted) {
      if (this.quoteSeen) {
        this.quoteSeen = false;
        if (b === QUOTE) return false; // "" inside a quoted field
        this.quoted = false; // the quote closed the field; this byte is read outside it
      } else {
        if (b === QUOTE) this.quoteSeen = true;
        return false;
      }
    }
    if (b === NL) return true;
    if (b === QUOTE && this.fieldStart) this.quoted = true;
    this.fieldStart = b === COMMA;
    return false;
  }
}

/** The pieces of a streamed file, in order (see RecordSplitter). */
export async function* splitRecords(source: AsyncIterable<Buffer>, csv: boolean, maxBytes = MAX_RECORD_BYTES): AsyncGenerator<SplitPiece> {
  const splitter = new RecordSplitter(maxBytes, csv);
  for await (const chunk of source) yield* splitter.push(chunk);
  yield* splitter.end();
}
