import { z } from 'zod';
import { ValidationError } from '@billstream/errors';
import { parseOrThrow } from './validation';

const schema = z.strictObject({
  email: z.string().email(),
  address: z.strictObject({ city: z.string() }).optional(),
  items: z.array(z.object({ n: z.number() })).optional(),
});

function fieldOf(value: unknown): string | undefined {
  try {
    parseOrThrow(schema, value);
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return (err as ValidationError).details?.field as string;
  }
}

describe('parseOrThrow names the bad field in details.field', () => {
  it('names a missing or invalid field', () => {
    expect(fieldOf({})).toBe('email');
    expect(fieldOf({ email: 'not-an-email' })).toBe('email');
  });
  it('names an unknown field, nested ones with their path', () => {
    expect(fieldOf({ email: 'a@b.co', colour: 'red' })).toBe('colour');
    expect(fieldOf({ email: 'a@b.co', address: { city: 'x', planet: 'mars' } })).toBe('address.planet');
  });
  it('names array elements by index', () => {
    expect(fieldOf({ email: 'a@b.co', items: [{ n: 1 }, { n: 'two' }] })).toBe('items.1.n');
  });
  it('returns the parsed value when valid', () => {
    expect(parseOrThrow(schema, { email: 'a@b.co' })).toEqual({ email: 'a@b.co' });
  });
});
