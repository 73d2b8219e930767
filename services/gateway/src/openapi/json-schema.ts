import { z } from 'zod';

export type JsonSchema = { [key: string]: unknown };

const DEFS_REF = '#/$defs/';
const COMPONENT_REF = '#/components/schemas/';

/**
 * The named schemas of the document (`components.schemas`). Zod schemas that carry
 * `.meta({ id })` land here once and are referenced; a name taken by a different schema
 * (the input and output forms of one zod schema differ) gets an `Input`/`Output` suffix.
 */
export class SchemaComponents {
  readonly schemas: Record<string, JsonSchema> = {};

  register(name: string, schema: JsonSchema, io: 'input' | 'output'): string {
    const candidates = [name, `${name}${io === 'input' ? 'Input' : 'Output'}`];
    for (let n = 2; candidates.length < 10; n++) candidates.push(`${candidates[1]}${n}`);
    const body = JSON.stringify(schema);
    for (const candidate of candidates) {
      const existing = this.schemas[candidate];
      if (!existing) {
        this.schemas[candidate] = schema;
        return candidate;
      }
      if (JSON.stringify(existing) === body) return candidate;
    }
    throw new Error(`too many different schemas named ${name}`);
  }

  /** Follows a `$ref` into the components (other schemas are returned as they are). */
  resolve(schema: JsonSchema): JsonSchema {
    const ref = schema.$ref;
    if (typeof ref === 'string' && ref.startsWith(COMPONENT_REF)) {
      const target = this.schemas[ref.slice(COMPONENT_REF.length)];
      if (!target) throw new Error(`unresolved schema reference ${ref}`);
      return this.resolve(target);
    }
    return schema;
  }
}

function mapDeep(value: unknown, fn: (node: JsonSchema) => JsonSchema): unknown {
  if (Array.isArray(value)) return value.map((v) => mapDeep(v, fn));
  if (value && typeof value === 'object') {
    const out: JsonSchema = {};
    for (const [k, v] of Object.entries(value)) out[k] = mapDeep(v, fn);
    return fn(out);
  }
  return value;
}

/** Bounds that only restate "a safe integer" say nothing to a reader. */
function withoutSafeIntegerBounds(node: JsonSchema): JsonSchema {
  const out = { ...node };
  if (out.minimum === Number.MIN_SAFE_INTEGER) delete out.minimum;
  if (out.maximum === Number.MAX_SAFE_INTEGER) delete out.maximum;
  return out;
}

/**
 * A zod schema as an OpenAPI 3.1 schema (JSON Schema 2020-12) through zod's own
 * `z.toJSONSchema`: `io: 'input'` for what a client sends (defaults make fields optional,
 * transforms show their input), `'output'` for what the API answers.
 */
export function toJsonSchema(schema: z.ZodType, io: 'input' | 'output', components: SchemaComponents): JsonSchema {
  const raw = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as JsonSchema;
  const { $schema: _dialect, $defs, ...root } = raw;
  void _dialect;
  const names = new Map<string, string>();
  const defs = ($defs ?? {}) as Record<string, JsonSchema>;
  for (const id of Object.keys(defs)) names.set(id, id);
  const rewrite = (node: JsonSchema): JsonSchema => {
    const cleaned = withoutSafeIntegerBounds(node);
    const ref = cleaned.$ref;
    if (typeof ref === 'string' && ref.startsWith(DEFS_REF)) {
      const id = ref.slice(DEFS_REF.length);
      return { ...cleaned, $ref: `${COMPONENT_REF}${names.get(id) ?? id}` };
    }
    return cleaned;
  };
  // Register definitions first, so that references to them use their final names.
  for (const [id, def] of Object.entries(defs)) {
    names.set(id, components.register(id, mapDeep(def, rewrite) as JsonSchema, io));
  }
  return mapDeep(root, rewrite) as JsonSchema;
}

/** Examples attached to a zod schema with `.meta({ examples })`, if any. */
export function metaExamples(schema: z.ZodType): unknown[] | undefined {
  const meta = z.globalRegistry.get(schema) as { examples?: unknown } | undefined;
  const examples = meta?.examples;
  if (Array.isArray(examples) && examples.length > 0) return examples;
  if (examples && typeof examples === 'object') return Object.values(examples as Record<string, unknown>);
  return undefined;
}
