import { ValidationError } from '@billstream/errors';
import { assertStorableJson, mayHoldUnstorableText, MAX_JSON_DEPTH } from './json-guard';

function refusal(value: unknown, checkStrings = true): { field: string; message: string } | undefined {
  try {
    assertStorableJson(value, { checkStrings });
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    const e = err as ValidationError;
    return { field: e.details?.field as string, message: e.message };
  }
}

function nested(levels: number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < levels; i++) v = i % 2 === 0 ? { a: v } : [v];
  return v;
}

describe('assertStorableJson: what Postgres cannot store is refused with the path of it', () => {
  it('accepts ordinary JSON, valid surrogate pairs and other control characters included', () => {
    expect(refusal({ a: 'x', b: [1, true, null, { c: 'emoji \ud83d\ude00', d: 'tab\t' }] })).toBeUndefined();
    expect(refusal('plain')).toBeUndefined();
  });

  it('refuses a NUL in a string and names its path', () => {
    expect(refusal({ events: [{}, { properties: { name: 'a\u0000b' } }] })).toEqual({
      field: 'events.1.properties.name',
      message: expect.stringContaining('NUL'),
    });
    expect(refusal('a\u0000')?.field).toBe('');
  });

  it('refuses lone and reversed surrogates', () => {
    expect(refusal({ name: 'x\ud800' })?.field).toBe('name');
    expect(refusal({ name: '\udc00x' })?.field).toBe('name');
    expect(refusal({ name: '\ude00\ud83d' })).toEqual({ field: 'name', message: expect.stringContaining('surrogate') });
  });

  it('refuses a bad key and shows it escaped in the path', () => {
    expect(refusal({ metadata: { 'k\u0000': 'v' } })).toEqual({ field: 'metadata.k\\u0000', message: expect.stringContaining('key') });
    expect(refusal({ ['\ud800']: 1 })?.field).toBe('\\ud800');
  });

  it(`accepts ${MAX_JSON_DEPTH} levels and refuses one more, without recursion even at 100,000`, () => {
    expect(refusal(nested(MAX_JSON_DEPTH))).toBeUndefined();
    expect(refusal(nested(MAX_JSON_DEPTH + 1))).toEqual({ field: expect.any(String), message: expect.stringContaining('nested deeper than 64') });
    expect(refusal(nested(100_000))?.message).toContain('nested deeper');
  });

  it('skips the string scan when told the text holds no suspicious escape', () => {
    expect(refusal({ name: 'a\u0000' }, false)).toBeUndefined();
    expect(refusal(nested(MAX_JSON_DEPTH + 1), false)?.message).toContain('nested deeper');
  });
});

describe('mayHoldUnstorableText: the cheap pre-check on raw UTF-8 text', () => {
  it.each([
    ['{"a":"\\u0000"}', true],
    ['{"a":"\\ud800"}', true],
    ['{"a":"\\uDFFF"}', true],
    ['{"a":"\\ud83d\\ude00"}', true],
    ['{"a":"\\u00e9 \\u2603"}', false],
    ['{"a":"plain"}', false],
    ['{"a":"\\u"}', false],
  ])('%s -> %s', (text, expected) => {
    expect(mayHoldUnstorableText(Buffer.from(text))).toBe(expected);
  });
});
