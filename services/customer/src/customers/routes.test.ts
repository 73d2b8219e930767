import { ValidationError } from '@billstream/errors';
import { versionFromIfMatch } from './routes';

describe('versionFromIfMatch', () => {
  it('reads the version of a weak or strong ETag', () => {
    expect(versionFromIfMatch('W/"3"')).toBe(3);
    expect(versionFromIfMatch('"12"')).toBe(12);
    expect(versionFromIfMatch(' W/"1" ')).toBe(1);
  });

  it('means unconditional when absent or *', () => {
    expect(versionFromIfMatch(undefined)).toBeUndefined();
    expect(versionFromIfMatch('*')).toBeUndefined();
  });

  it.each(['3', 'W/3', 'W/"x"', '"1", "2"', ''])('refuses %j with a ValidationError naming If-Match', (value) => {
    expect(() => versionFromIfMatch(value)).toThrow(ValidationError);
    try {
      versionFromIfMatch(value);
    } catch (err) {
      expect((err as ValidationError).details).toMatchObject({ field: 'If-Match' });
    }
  });
});
