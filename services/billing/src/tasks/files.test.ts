import { parse } from 'csv-parse/sync';
import { encodeRows, readRows, UnreadableFileError, type ReadRow } from './files';

async function rows(fileType: 'CSV' | 'JSONL', text: string, columns = ['a', 'b'], maxRecordBytes?: number): Promise<ReadRow[]> {
  const out: ReadRow[] = [];
  async function* source() {
    // Split mid-way to cross chunk boundaries.
    const buf = Buffer.from(text);
    for (let i = 0; i < buf.length; i += 3) yield buf.subarray(i, i + 3);
  }
  for await (const r of readRows(fileType, source(), new Set(columns), maxRecordBytes)) out.push(r);
  return out;
}

describe('task files', () => {
  it.each(['\n', '\r\n'])('reads CSV rows with the line each starts on, quoted newlines and bad rows in file order (%j)', async (nl) => {
    const text = ['a,b', '1,"x' + nl + 'y"', '', '2,"3,4"', '5', '"6","say ""hi"""', '7,"un' + nl + 'closed'].join(nl);
    const got = await rows('CSV', text);
    expect(got).toEqual([
      { line: 2, fields: { a: '1', b: `x${nl}y` } },
      { line: 5, fields: { a: '2', b: '3,4' } },
      { line: 6, error: expect.stringMatching(/Invalid Record Length/) },
      { line: 7, fields: { a: '6', b: 'say "hi"' } },
      { line: 8, error: expect.stringMatching(/Quote Not Closed/) },
    ]);
  });

  it('refuses a CSV header with an unknown, empty or repeated column as a whole', async () => {
    await expect(rows('CSV', 'a,c\n1,2\n')).rejects.toThrow(UnreadableFileError);
    await expect(rows('CSV', 'a,c\n1,2\n')).rejects.toThrow(/unknown column c/);
    await expect(rows('CSV', 'a,a\n1,2\n')).rejects.toThrow(/twice/);
    await expect(rows('CSV', 'a,\n1,2\n')).rejects.toThrow(/empty column/);
  });

  it('reads JSONL objects by line, skipping blank lines and a BOM', async () => {
    const got = await rows('JSONL', '\uFEFF{"a":1}\n\n{bad\n[1]\r\n{"b":"x"}');
    expect(got).toEqual([
      { line: 1, fields: { a: 1 } },
      { line: 3, error: expect.stringMatching(/not valid JSON/) },
      { line: 4, error: 'must be a JSON object' },
      { line: 5, fields: { b: 'x' } },
    ]);
  });

  it('writes CSV that a CSV library reads back, header first, objects as JSON strings', () => {
    const rowsIn = [
      { a: 'x,y', b: { k: 'v "q"\nz' } },
      { a: null, b: 3 },
    ];
    const text = encodeRows('CSV', ['a', 'b'], rowsIn, true).toString() + encodeRows('CSV', ['a', 'b'], [{ a: 'line\r\nbreak', b: true }], false).toString();
    expect(parse(text, { columns: true })).toEqual([
      { a: 'x,y', b: '{"k":"v \\"q\\"\\nz"}' },
      { a: '', b: '3' },
      { a: 'line\r\nbreak', b: 'true' },
    ]);
    expect(encodeRows('JSONL', ['a'], rowsIn, true).toString().split('\n')).toHaveLength(3);
  });

  it('neutralises formulas in CSV text cells with a leading quote, leaving numbers (negative ones too) and JSONL as they are', () => {
    const rowsIn = [
      { a: '=HYPERLINK("http://evil.test","click")', b: '+1' },
      { a: '-x', b: '@SUM(A1)' },
      { a: '\tx', b: '\rx' },
      { a: '-5.00', b: -500 },
      { a: '\uFF1D1+1', b: 'plain -1' },
    ];
    const text = encodeRows('CSV', ['a', 'b'], rowsIn, true).toString();
    expect(parse(text, { columns: true })).toEqual([
      { a: `'=HYPERLINK("http://evil.test","click")`, b: "'+1" },
      { a: "'-x", b: "'@SUM(A1)" },
      { a: "'\tx", b: "'\rx" },
      { a: "'-5.00", b: '-500' },
      { a: "'\uFF1D1+1", b: 'plain -1' },
    ]);
    expect(encodeRows('JSONL', ['a', 'b'], rowsIn, true).toString().split('\n')[0]).toBe(JSON.stringify(rowsIn[0]));
  });

  it('reads back on import what escape_formulas wrote: the leading quote it added goes', async () => {
    const written = encodeRows('CSV', ['a', 'b'], [{ a: '=1+1', b: "'kept" }, { a: '-x', b: "'-y" }], true).toString();
    expect(await rows('CSV', written)).toEqual([
      { line: 2, fields: { a: '=1+1', b: "'kept" } },
      { line: 3, fields: { a: '-x', b: '-y' } },
    ]);
  });

  it('skips a JSONL line over the cap with an error on its line, and reads the lines around it', async () => {
    const long = JSON.stringify({ a: 'x'.repeat(100) });
    const got = await rows('JSONL', `{"a":1}\n${long}\r\n\n{"b":2}\n${long}`, ['a', 'b'], 64);
    expect(got).toEqual([
      { line: 1, fields: { a: 1 } },
      { line: 2, error: 'the line is longer than 64 bytes, the most one line of an import may take; it was skipped' },
      { line: 4, fields: { b: 2 } },
      { line: 5, error: expect.stringMatching(/line is longer than 64 bytes/) },
    ]);
  });

  it('skips a CSV row over the cap (quoted line breaks included) with an error on the line it starts, in file order', async () => {
    const long = `"${'y'.repeat(40)}\n${'z'.repeat(40)}"`;
    const text = ['a,b', '1,2', `3,${long}`, '4', '5,6', `7,${long}`].join('\n');
    expect(await rows('CSV', text, ['a', 'b'], 64)).toEqual([
      { line: 2, fields: { a: '1', b: '2' } },
      { line: 3, error: 'the row is longer than 64 bytes, the most one row of an import may take; it was skipped' },
      { line: 5, error: expect.stringMatching(/Invalid Record Length/) },
      { line: 6, fields: { a: '5', b: '6' } },
      { line: 7, error: expect.stringMatching(/row is longer than 64 bytes/) },
    ]);
    // With a one-column header the skipped row still reads as an error, not as a value.
    expect(await rows('CSV', `a\n1\n${'x'.repeat(70)}\n2\n`, ['a'], 64)).toEqual([
      { line: 2, fields: { a: '1' } },
      { line: 3, error: expect.stringMatching(/row is longer than 64 bytes/) },
      { line: 4, fields: { a: '2' } },
    ]);
  });

  it('refuses a CSV file whose header is over the cap as a whole', async () => {
    await expect(rows('CSV', `${'a,'.repeat(40)}b\n1,2\n`, ['a', 'b'], 64)).rejects.toThrow(/CSV header \(line 1\) is longer than 64 bytes/);
  });
});
