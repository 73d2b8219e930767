import { parse } from 'csv-parse/sync';
import { encodeRows, readRows, UnreadableFileError, type ReadRow } from './files';

async function rows(fileType: 'CSV' | 'JSONL', text: string, columns = ['a', 'b']): Promise<ReadRow[]> {
  const out: ReadRow[] = [];
  async function* source() {
    // Split mid-way to cross chunk boundaries.
    const buf = Buffer.from(text);
    for (let i = 0; i < buf.length; i += 3) yield buf.subarray(i, i + 3);
  }
  for await (const r of readRows(fileType, source(), new Set(columns))) out.push(r);
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
});
