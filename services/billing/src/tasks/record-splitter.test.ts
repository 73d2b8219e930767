import { RecordSplitter, splitRecords, type SplitPiece } from './record-splitter';

const MiB = 1024 * 1024;

/** Feeds `text` in chunks of `size` bytes; the pieces in order, the records' bytes joined. */
function split(text: string, size: number, maxBytes: number, csv: boolean): { pieces: SplitPiece[]; records: string } {
  const splitter = new RecordSplitter(maxBytes, csv);
  const buf = Buffer.from(text);
  const pieces: SplitPiece[] = [];
  for (let i = 0; i < buf.length; i += size) pieces.push(...splitter.push(buf.subarray(i, i + size)));
  pieces.push(...splitter.end());
  const records = Buffer.concat(pieces.flatMap((p) => (p.kind === 'records' ? [p.bytes] : []))).toString();
  return { pieces, records };
}

const overlong = (pieces: SplitPiece[]) => pieces.filter((p) => p.kind === 'overlong');

describe('RecordSplitter', () => {
  it('never holds more than the cap plus one chunk, whatever the length of a line', () => {
    const cap = MiB;
    const chunk = 64 * 1024;
    const splitter = new RecordSplitter(cap, false);
    const line = Buffer.alloc(chunk, 'x');
    let most = 0;
    let passed = 0;
    const feed = (buf: Buffer) => {
      for (const piece of splitter.push(buf)) {
        if (piece.kind === 'records') {
          passed += piece.bytes.length;
          expect(piece.bytes.length).toBeLessThanOrEqual(cap + 1 + chunk);
        }
      }
      most = Math.max(most, splitter.heldNow);
    };
    feed(Buffer.from('{"a":1}\n'));
    // One line of 16 MiB, then a short one.
    for (let i = 0; i < 256; i += 1) feed(line);
    feed(Buffer.from('\n{"b":2}\n'));
    // The bound is the cap plus a chunk (the chunk being read); what is held between chunks stays under the cap.
    expect(most).toBeLessThanOrEqual(cap + chunk);
    expect(most).toBeLessThanOrEqual(cap);
    expect(splitter.heldNow).toBe(0);
    expect(passed).toBe('{"a":1}\n{"b":2}\n'.length);
  });

  it('passes whole lines on and drops the one over the cap with its line and line breaks (JSONL)', () => {
    const text = `a\n${'x'.repeat(20)}\r\nb\n\nc\n${'y'.repeat(20)}`;
    for (const size of [1, 3, 7, 1000]) {
      const { pieces, records } = split(text, size, 10, false);
      expect(records).toBe('a\nb\n\nc\n');
      expect(overlong(pieces)).toEqual([
        { kind: 'overlong', line: 2, breaks: 1 },
        { kind: 'overlong', line: 6, breaks: 0 },
      ]);
    }
  });

  it('keeps a record of exactly the cap, and a last line without a line break', () => {
    const { pieces, records } = split(`${'x'.repeat(10)}\n${'y'.repeat(10)}`, 4, 10, false);
    expect(overlong(pieces)).toEqual([]);
    expect(records).toBe(`${'x'.repeat(10)}\n${'y'.repeat(10)}`);
  });

  it('reads CSV records as RFC 4180 does: line breaks and "" inside quoted fields do not end them', () => {
    const long = `"${'q'.repeat(8)}""\n${'r'.repeat(8)}"`;
    const text = ['h,i', '"a\nb",c', `1,${long},2`, 'x"y,z', '3,4'].join('\n');
    for (const size of [1, 2, 5, 1000]) {
      const { pieces, records } = split(text, size, 16, true);
      expect(overlong(pieces)).toEqual([{ kind: 'overlong', line: 4, breaks: 2 }]);
      expect(records).toBe(['h,i', '"a\nb",c', 'x"y,z', '3,4'].join('\n'));
    }
  });

  it('streams a source with splitRecords', async () => {
    async function* source() {
      yield Buffer.from('ab\ncd');
      yield Buffer.from('efgh\nij');
    }
    const pieces: SplitPiece[] = [];
    for await (const p of splitRecords(source(), false, 4)) pieces.push(p);
    expect(pieces).toEqual([
      { kind: 'records', bytes: Buffer.from('ab\n') },
      { kind: 'overlong', line: 2, breaks: 1 },
      { kind: 'records', bytes: Buffer.from('ij') },
    ]);
  });
});
