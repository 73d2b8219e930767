import { ValidationError, VersionConflictError } from '@billstream/errors';
import { assertIfMatch, etagOf, matchesIfMatch } from './etag';

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

describe('assertIfMatch', () => {
  it('lets a matching, absent or `*` If-Match through and refuses a stale one with version_conflict naming the current ETag', () => {
    expect(() => assertIfMatch(undefined, 2, 'Plan plan_1')).not.toThrow();
    expect(() => assertIfMatch('*', 2, 'Plan plan_1')).not.toThrow();
    expect(() => assertIfMatch('"1", "2"', 2, 'Plan plan_1')).not.toThrow();
    const stale = (() => {
      try {
        assertIfMatch('"1"', 2, 'Plan plan_1');
      } catch (err) {
        return err;
      }
    })();
    expect(stale).toBeInstanceOf(VersionConflictError);
    expect((stale as VersionConflictError).message).toBe('Plan plan_1 was modified by another request; read it again');
    expect((stale as VersionConflictError).details).toEqual({ field: 'If-Match', current_etag: '"2"' });
    expect(() => assertIfMatch('2', 2, 'Plan plan_1')).toThrow(ValidationError);
  });
});
