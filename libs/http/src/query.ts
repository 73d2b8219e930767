import { z } from 'zod';
import { ValidationError } from '@billstream/errors';
import { parseOrThrow } from './validation';

/** A query string's parameters: a string each, or the strings of a repeated parameter. */
export type QueryParams = Record<string, string | string[]>;

function refuse(field: string, message: string): ValidationError {
  return new ValidationError(`Query is invalid: ${field} ${message}`, { field, issues: [{ field, message }] });
}

function decode(text: string, field: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw refuse(field, 'is not valid percent-encoded UTF-8');
  }
}

/**
 * The app's query parser (express `query parser`): flat `name=value` pairs, nothing else.
 * Brackets carry no meaning (`limit[]=1` is a parameter named `limit[]`, hence unknown), a
 * repeated name gives a list, malformed percent-encoding and NUL characters are refused
 * with 400 naming the parameter. The result has no prototype: `__proto__` is just a name.
 */
export function parseQueryString(query: string): QueryParams {
  const out = Object.create(null) as QueryParams;
  if (!query) return out;
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    const name = decode(rawName, rawName);
    const value = eq === -1 ? '' : decode(pair.slice(eq + 1), name);
    if (name.includes('\u0000')) throw refuse(rawName, 'must not contain NUL characters (%00)');
    if (value.includes('\u0000')) throw refuse(name, 'must not contain NUL characters (%00)');
    const previous = out[name];
    if (previous === undefined) out[name] = value;
    else if (Array.isArray(previous)) previous.push(value);
    else out[name] = [previous, value];
  }
  return out;
}

type Def = { type: string; innerType?: z.ZodType; in?: z.ZodType; options?: z.ZodType[] };

/** Whether a query field's schema takes a list (a parameter that may be repeated, e.g. `csvList`). */
function takesList(schema: z.ZodType | undefined): boolean {
  for (let s = schema; s; ) {
    const def = s.def as unknown as Def;
    if (def.type === 'array') return true;
    if (def.type === 'union') return (def.options ?? []).some(takesList);
    s = def.innerType ?? def.in;
  }
  return false;
}

interface QueryShape {
  names: Set<string>;
  lists: Set<string>;
}

const shapes = new WeakMap<z.ZodType, QueryShape>();

function shapeOf(schema: z.ZodType): QueryShape {
  let shape = shapes.get(schema);
  if (!shape) {
    const fields = schema instanceof z.ZodObject ? (schema.shape as Record<string, z.ZodType>) : {};
    const names = Object.keys(fields);
    shape = { names: new Set(names), lists: new Set(names.filter((k) => takesList(fields[k]))) };
    shapes.set(schema, shape);
  }
  return shape;
}

const NO_QUERY = z.strictObject({});

/**
 * A route's query, checked: a known parameter given more than once where the schema takes
 * one value is refused, then the schema applies (unknown parameters included: a route
 * without a query schema takes none).
 */
export function parseQuery<S extends z.ZodType>(schema: S | undefined, query: QueryParams): z.output<S> | undefined {
  if (!schema) {
    parseOrThrow(NO_QUERY, query, 'Query');
    return undefined;
  }
  const { names, lists } = shapeOf(schema);
  for (const name of Object.keys(query)) {
    if (!names.has(name) && name.includes('[')) {
      throw refuse(name, 'is unknown: brackets carry no meaning here (repeat the parameter or separate values with commas)');
    }
    if (Array.isArray(query[name]) && names.has(name) && !lists.has(name)) throw refuse(name, 'must be given once');
  }
  return parseOrThrow(schema, query, 'Query');
}
