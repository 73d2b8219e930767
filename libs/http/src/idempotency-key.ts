import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';
import type { RouteDef } from '@billstream/contracts';
import { ValidationError } from '@billstream/errors';

/** The request header that carries an idempotency key, as Stripe's clients send it (ADR 0035). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
const FIELD = 'idempotency_key';

interface ZodDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  in?: z.ZodType;
  innerType?: z.ZodType;
}

const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: ZodDef } })._zod.def;

/**
 * The schema of the `idempotency_key` field of a body schema (an object, possibly refined,
 * piped or wrapped in optional/default), or undefined when the body takes none.
 */
function keyFieldOf(schema: z.ZodType): z.ZodType | undefined {
  const def = defOf(schema);
  if (def.type === 'object') return def.shape?.[FIELD];
  if (def.type === 'pipe' && def.in) return keyFieldOf(def.in);
  if ((def.type === 'optional' || def.type === 'default' || def.type === 'nullable') && def.innerType) return keyFieldOf(def.innerType);
  return undefined;
}

const keyFields = new WeakMap<RouteDef, z.ZodType | null>();

/** Whether the route's body takes an `idempotency_key` (and so honours the Idempotency-Key header). */
export function takesIdempotencyKey(def: RouteDef): boolean {
  return idempotencyFieldOf(def) !== undefined;
}

function idempotencyFieldOf(def: RouteDef): z.ZodType | undefined {
  let field = keyFields.get(def);
  if (field === undefined) {
    field = (def.body && keyFieldOf(def.body)) || null;
    keyFields.set(def, field);
  }
  return field ?? undefined;
}

/**
 * The header's value as the client wrote it: node reads header bytes as latin1, so a key sent
 * in UTF-8 is decoded back (a key matches the same key sent in the body). Bytes that are not
 * UTF-8 are refused.
 */
function headerKey(raw: string): string {
  const bytes = Buffer.from(raw, 'latin1');
  const text = bytes.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(bytes)) {
    throw new ValidationError(`${IDEMPOTENCY_KEY_HEADER} header is invalid: must be UTF-8 text`, { field: IDEMPOTENCY_KEY_HEADER });
  }
  return text;
}

/**
 * The body of a route with the `Idempotency-Key` header merged in (ADR 0035): on a route whose
 * body takes `idempotency_key`, the header alone sets it, the body alone keeps it, both equal
 * are one key; both different is a 400 naming the header. The header follows the body field's
 * own rules (same schema, same 400). Routes whose body takes no key ignore the header, as
 * Stripe does on GETs. Pure: the request's body is not changed.
 */
export function withIdempotencyKey(def: RouteDef, body: unknown, headers: IncomingHttpHeaders | undefined): unknown {
  const raw = headers?.['idempotency-key'];
  if (raw === undefined) return body;
  const field = idempotencyFieldOf(def);
  if (!field) return body;
  const key = headerKey(typeof raw === 'string' ? raw : raw.join(', '));
  const checked = field.safeParse(key);
  if (!checked.success) {
    const message = checked.error.issues[0]?.message ?? 'is invalid';
    throw new ValidationError(`${IDEMPOTENCY_KEY_HEADER} header is invalid: ${message}`, {
      field: IDEMPOTENCY_KEY_HEADER,
      issues: checked.error.issues.map((i) => ({ field: IDEMPOTENCY_KEY_HEADER, message: i.message })),
    });
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const sent = (body as Record<string, unknown>)[FIELD];
  if (sent === undefined) return { ...body, [FIELD]: key };
  // A body key that is not a string is the body schema's to refuse.
  if (typeof sent === 'string' && sent !== key) {
    throw new ValidationError(`${IDEMPOTENCY_KEY_HEADER} header and body field ${FIELD} differ; send one key, or the same key in both`, {
      field: IDEMPOTENCY_KEY_HEADER,
      header: key,
      body: sent,
    });
  }
  return body;
}
