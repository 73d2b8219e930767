import type { RouteDef } from '@billstream/contracts';
import { ApiError } from '../api';

/** A route's body schema, as the form validates with it before sending. */
export type BodySchema = NonNullable<RouteDef['body']>;

/** What a form shows: messages next to its fields, and one at its top for the rest. */
export interface FormErrors {
  fields: Record<string, string>;
  form?: string;
}

export const NO_ERRORS: FormErrors = { fields: {} };

/**
 * The form's field that an error names: the field itself (`email`), else the field its path
 * starts with (`lines.0.amount` -> `lines`), else none (the message goes to the form's top).
 */
export function fieldFor(name: string | undefined, fields: readonly string[]): string | undefined {
  if (!name) return undefined;
  if (fields.includes(name)) return name;
  const first = name.split('.')[0] ?? '';
  return fields.includes(first) ? first : undefined;
}

const takesKey = new WeakMap<BodySchema, boolean>();

/**
 * Whether the route's body takes `idempotency_key`: then the API merges the Idempotency-Key
 * header into the body before its schema sees it (libs/http, ADR 0035), and so must the form.
 * A strict body that takes none names the field as unknown.
 */
export function takesIdempotencyKey(schema: BodySchema): boolean {
  let known = takesKey.get(schema);
  if (known === undefined) {
    const result = schema.safeParse({ idempotency_key: 'probe' });
    known = result.success || !result.error.issues.some((i) => i.code === 'unrecognized_keys' && i.keys.includes('idempotency_key'));
    takesKey.set(schema, known);
  }
  return known;
}

/** The body as the API's schema will see it: with the header's key when the body takes one and has none. */
export function withKey(schema: BodySchema, body: unknown, key: string | undefined): unknown {
  if (!key || body === null || typeof body !== 'object' || Array.isArray(body) || 'idempotency_key' in body) return body;
  return takesIdempotencyKey(schema) ? { ...body, idempotency_key: key } : body;
}

/** Issues of a body schema placed as the API places them (libs/http validation: the joined path, "is required"). */
export function schemaErrors(schema: BodySchema, body: unknown, fields: readonly string[]): FormErrors | null {
  const result = schema.safeParse(body, { reportInput: true });
  if (result.success) return null;
  const errors: FormErrors = { fields: {} };
  for (const issue of result.error.issues) {
    const path = issue.path.map(String).join('.');
    const name = issue.code === 'unrecognized_keys' && issue.keys[0] ? (path ? `${path}.${issue.keys[0]}` : issue.keys[0]) : path;
    const message = issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : issue.message;
    const field = fieldFor(name, fields);
    if (field) errors.fields[field] ??= message;
    else errors.form ??= name ? `${name} ${message}` : message;
  }
  return errors;
}

/** An API error placed next to the field its envelope names (`details.field`), else at the form's top. */
export function apiErrors(error: unknown, fields: readonly string[]): FormErrors {
  const e = error instanceof ApiError ? error : new ApiError(String(error), 0, undefined, {});
  const field = fieldFor(e.field, fields);
  return field ? { fields: { [field]: e.message } } : { fields: {}, form: e.message };
}
