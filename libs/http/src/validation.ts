import { z } from 'zod';
import { ValidationError } from '@billstream/errors';

function fieldOf(issue: z.core.$ZodIssue): string {
  const base = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys' && issue.keys.length > 0) {
    return base ? `${base}.${issue.keys[0]}` : issue.keys[0];
  }
  return base;
}

function messageOf(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return `unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}`;
  if (issue.code === 'invalid_type' && issue.input === undefined) return 'is required';
  return issue.message;
}

/** A zod failure as a ValidationError whose details.field names the first bad field. */
export function toValidationError(error: z.ZodError, what = 'Request'): ValidationError {
  const issues = error.issues.map((i) => ({ field: fieldOf(i), message: messageOf(i) }));
  const first = issues[0] ?? { field: '', message: 'is invalid' };
  return new ValidationError(
    first.field ? `${what} is invalid: ${first.field} ${first.message}` : `${what} is invalid: ${first.message}`,
    { field: first.field, issues },
  );
}

/** Parses a value with a schema or throws a ValidationError naming the field. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, what?: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw toValidationError(result.error, what);
  return result.data;
}
