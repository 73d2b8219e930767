import type { z } from 'zod';

/**
 * Throws unless a service's settings mapping honours every variable of its schema: `values`
 * gives each variable a valid value other than its default (and must name every key of the
 * schema, so a new variable needs one here too), and setting that variable alone must change
 * what `settingsFrom` returns. A variable parsed and then dropped by the mapping fails here.
 */
export function expectEveryVariableHonoured(
  schema: z.ZodObject<z.ZodRawShape>,
  settingsFrom: (env: NodeJS.ProcessEnv) => unknown,
  values: Record<string, string>,
  base: NodeJS.ProcessEnv = {},
): void {
  const keys = Object.keys(schema.shape);
  const missing = keys.filter((name) => !(name in values));
  const unknown = Object.keys(values).filter((name) => !keys.includes(name));
  if (missing.length > 0 || unknown.length > 0) {
    throw new Error(`values must name every variable of the schema: missing ${missing.join(', ') || 'none'}; not in the schema ${unknown.join(', ') || 'none'}`);
  }
  const defaults = JSON.stringify(settingsFrom(base));
  const ignored = keys.filter((name) => JSON.stringify(settingsFrom({ ...base, [name]: values[name] })) === defaults);
  if (ignored.length > 0) throw new Error(`the settings ignore ${ignored.join(', ')}: setting it changes nothing`);
}
