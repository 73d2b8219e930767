import { z } from 'zod';
import { ValidationError } from '@billstream/errors';
import { csvList } from '@billstream/contracts';
import { parseQuery, parseQueryString } from './query';

function refusal(run: () => unknown): { field: string; message: string } | undefined {
  try {
    run();
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    const e = err as ValidationError;
    return { field: e.details?.field as string, message: e.message };
  }
}

describe('parseQueryString: flat name=value pairs', () => {
  it('decodes names and values, + as space, repeats as a list', () => {
    expect({ ...parseQueryString('a=1&b=x+y%2B&c&a=2&&d=') }).toEqual({ a: ['1', '2'], b: 'x y+', c: '', d: '' });
  });

  it('gives brackets no meaning and has no prototype', () => {
    const q = parseQueryString('limit[]=1&__proto__=x&a[b]=c');
    expect(Object.getPrototypeOf(q)).toBeNull();
    expect(Object.keys(q)).toEqual(['limit[]', '__proto__', 'a[b]']);
  });

  it.each(['a=%', 'a=%zz', 'a=%ff%fe', 'a=%C0%AE', 'a=%ED%A0%80'])('refuses malformed encoding %s naming the parameter', (qs) => {
    expect(refusal(() => parseQueryString(qs))).toEqual({ field: 'a', message: expect.stringContaining('percent-encoded') });
  });

  it('refuses a NUL in a value or a name', () => {
    expect(refusal(() => parseQueryString('email=a%00b'))?.field).toBe('email');
    expect(refusal(() => parseQueryString('e%00=1'))?.field).toBe('e%00');
  });
});

describe('parseQuery: a route query checked against its schema', () => {
  const schema = z.strictObject({
    limit: z.coerce.number().int().default(50),
    ids: csvList.optional(),
    tags: csvList.refine((v) => v.length < 5).optional(),
  });

  it('takes a repeated list parameter', () => {
    expect(parseQuery(schema, parseQueryString('ids=a&ids=b,c&tags=x&tags=y'))).toEqual({ limit: 50, ids: ['a', 'b', 'c'], tags: ['x', 'y'] });
  });

  it('refuses a repeated scalar parameter and array syntax, naming them', () => {
    expect(refusal(() => parseQuery(schema, parseQueryString('limit=1&limit=2')))).toEqual({ field: 'limit', message: 'Query is invalid: limit must be given once' });
    expect(refusal(() => parseQuery(schema, parseQueryString('limit[]=1')))).toEqual({ field: 'limit[]', message: expect.stringContaining('brackets') });
  });

  it('refuses any parameter on a route without a query schema', () => {
    expect(parseQuery(undefined, parseQueryString(''))).toBeUndefined();
    expect(refusal(() => parseQuery(undefined, parseQueryString('expand=x')))?.field).toBe('expand');
    expect(refusal(() => parseQuery(undefined, parseQueryString('x=1&x=2')))?.field).toBe('x');
  });
});
