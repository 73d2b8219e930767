import { ValidationError } from '@billstream/errors';
import { etagOf, matchesIfMatch } from './etag';

describe('etagOf', () => {
  it('is the version number as a strong ETag', () => {
    expect(etagOf(1)).toBe('"1"');
    expect(etagOf(42)).toBe('"42"');
  });
});

describe('matchesIfMatch', () => {
  const current = etagOf(3);

  it('lets an update through without the header, or with *', () => {
    expect(matchesIfMatch(undefined, current)).toBe(true);
    expect(matchesIfMatch('*', current)).toBe(true);
    expect(matchesIfMatch(' * ', current)).toBe(true);
  });

  it('matches the current ETag, alone or in a list, spaces allowed', () => {
    expect(matchesIfMatch('"3"', current)).toBe(true);
    expect(matchesIfMatch(' "3" ', current)).toBe(true);
    expect(matchesIfMatch('"1", "3"', current)).toBe(true);
    expect(matchesIfMatch('"1","3"', current)).toBe(true);
  });

  it('refuses another version, and a weak tag even of the current version (strong comparison)', () => {
    expect(matchesIfMatch('"2"', current)).toBe(false);
    expect(matchesIfMatch('"1", "2"', current)).toBe(false);
    expect(matchesIfMatch('W/"3"', current)).toBe(false);
    expect(matchesIfMatch('""', current)).toBe(false);
  });

  it.each(['3', 'W/3', '"3', '3"', '"1" "3"', '"1",', ',"1"', '', ' ', 'yesterday', '"3", *'])(
    'refuses %j with a ValidationError naming If-Match',
    (value) => {
      expect(() => matchesIfMatch(value, current)).toThrow(ValidationError);
      try {
        matchesIfMatch(value, current);
      } catch (err) {
        expect((err as ValidationError).details).toMatchObject({ field: 'If-Match', value });
      }
    },
  );
});
