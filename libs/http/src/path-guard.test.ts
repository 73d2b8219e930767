import { ValidationError } from '@billstream/errors';
import { assertDecodablePath } from './path-guard';

describe('assertDecodablePath', () => {
  it.each(['/v1/customers/cust_1', '/v1/customers/a%20b', '/v1/customers/%C3%A9'])('accepts %s', (path) => {
    expect(() => assertDecodablePath(path)).not.toThrow();
  });

  it.each(['/v1/customers/%', '/v1/customers/%zz', '/v1/customers/%00', '/v1/customers/%ff%fe', '/v1/customers/%C0%AE', '/v1/x/%ED%A0%80/y'])(
    'refuses %s with 400 naming the path',
    (path) => {
      let caught: unknown;
      try {
        assertDecodablePath(path);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(ValidationError);
      expect((caught as ValidationError).details).toMatchObject({ field: 'path', segment: path.split('/').find((s) => s.includes('%')) });
    },
  );
});
