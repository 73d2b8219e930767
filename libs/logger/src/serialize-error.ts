/**
 * Errors as JSON. `JSON.stringify(new Error('x'))` is `{}`: message and stack are not own
 * enumerable properties, so winston's JSON format wrote `"err":{}` for every 500 and no failure
 * could be diagnosed (ADR 0034). These functions write what an error carries instead.
 */

/** Fields of node-postgres' DatabaseError (and the `code` of Node's system errors) worth a log line. */
const DRIVER_FIELDS = ['code', 'detail', 'hint', 'constraint', 'table', 'schema', 'column', 'dataType', 'routine', 'severity', 'where', 'position'] as const;

/** How deep a cause chain, or metadata holding errors, is followed. */
const MAX_DEPTH = 6;

export type SerializedError = Record<string, unknown> & { name: string; message: string; stack?: string };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * One error as a plain object: name, message, stack, the driver's fields (code, detail,
 * constraint, table, schema, ...), its other own properties (a DomainError's kind and details)
 * and its `cause` (and an AggregateError's `errors`), serialised the same way.
 */
export function serializeError(err: Error, depth = 0, seen: Set<unknown> = new Set()): SerializedError {
  // `seen` holds the path from the top: an error met again on it (a cause cycle) is not followed.
  seen.add(err);
  const out: SerializedError = { name: err.name, message: err.message };
  if (err.stack) out.stack = err.stack;
  const record = err as unknown as Record<string, unknown>;
  for (const field of DRIVER_FIELDS) {
    if (record[field] !== undefined && record[field] !== null && record[field] !== '') out[field] = record[field];
  }
  for (const key of Object.keys(err)) {
    if (key in out || key === 'cause' || key === 'errors') continue;
    out[key] = errorsIn(record[key], depth + 1, seen);
  }
  if (err.cause !== undefined) out.cause = errorsIn(err.cause, depth + 1, seen);
  if (Array.isArray(record.errors)) out.errors = errorsIn(record.errors, depth + 1, seen);
  seen.delete(err);
  return out;
}

/**
 * `value` with every Error in it (itself, or inside plain objects and arrays) replaced by its
 * serialised form. Returns `value` itself when it holds no error, so a log line without one
 * costs a walk of its metadata and no copy.
 */
export function errorsIn(value: unknown, depth = 0, seen: Set<unknown> = new Set()): unknown {
  if (value instanceof Error) {
    if (seen.has(value)) return '[circular]';
    return depth > MAX_DEPTH ? { name: value.name, message: value.message } : serializeError(value, depth, seen);
  }
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object' || seen.has(value)) return value;
  if (Array.isArray(value)) {
    seen.add(value);
    let copy: unknown[] | undefined;
    value.forEach((item, i) => {
      const replaced = errorsIn(item, depth + 1, seen);
      if (replaced !== item) (copy ??= [...value])[i] = replaced;
    });
    seen.delete(value);
    return copy ?? value;
  }
  if (!isPlainObject(value)) return value;
  seen.add(value);
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const replaced = errorsIn(value[key], depth + 1, seen);
    if (replaced !== value[key]) (copy ??= { ...value })[key] = replaced;
  }
  seen.delete(value);
  return copy ?? value;
}
