import { normalizeEventTimestamp, USAGE_EVENT_MIN_YEAR, usageEventMessageSchema, type UsageEventMessage } from '@billstream/contracts';
import { INVALID_JSON, INVALID_MESSAGE, type RecordError } from './record-errors';

/** Who a record belongs to, as far as it says (dead letters are counted per tenant and environment). */
export interface RecordOwner {
  tenantId?: string;
  environmentId?: string;
  eventId?: string;
}

export type ParsedMessage = { ok: true; event: UsageEventMessage } | { ok: false; error: RecordError; owner: RecordOwner };

/** A timestamp the partition manager and Postgres can take: a real instant from 1970 on, in the normal form. */
function isStorableTimestamp(value: string): boolean {
  try {
    return normalizeEventTimestamp(value) === value && Number(value.slice(0, 4)) >= USAGE_EVENT_MIN_YEAR;
  } catch {
    return false;
  }
}

/**
 * The message schema, plus a real event time: a month that is no month (`2026-13`) would fail
 * the partition manager's DDL, outside the batch, for every retry.
 */
const storableMessageSchema = usageEventMessageSchema.refine((m) => isStorableTimestamp(m.timestamp), {
  path: ['timestamp'],
  message: 'is not a storable instant',
});

/**
 * Deepest nesting of objects and arrays a message may have (the message object is level 1).
 * Far above what the gateway lets through (64 levels of a whole request body), below what
 * breaks a store: Postgres 15 refuses about 20,000 levels (54001, isolated like any record
 * error), but embedded PGlite (WebAssembly) answers about 6,000 levels with an empty result
 * and a broken session, so such a record must never reach it.
 */
export const MAX_MESSAGE_DEPTH = 1000;

/** Whether a JSON text nests objects and arrays deeper than `max` (one pass over the text). */
export function nestsDeeperThan(json: string, max: number): boolean {
  if (json.length <= 2 * max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i += 1) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth += 1;
      if (depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth -= 1;
  }
  return false;
}

const text = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** The owner named by the value's fields, else by the key the gateway gives (`tenant:environment:customer`). */
function ownerOf(key: string, value: unknown): RecordOwner {
  const fields = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  const parts = key.split(':');
  const [keyTenant, keyEnvironment] = parts.length >= 3 ? parts : [];
  return {
    tenantId: text(fields.tenant_id) ?? keyTenant,
    environmentId: text(fields.environment_id) ?? keyEnvironment,
    eventId: text(fields.event_id),
  };
}

/** A usage-events record as the event it carries, or why it can never be one. */
export function parseUsageMessage(key: string, value: string): ParsedMessage {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch (err) {
    return { ok: false, error: { code: INVALID_JSON, message: (err as Error).message }, owner: ownerOf(key, undefined) };
  }
  if (nestsDeeperThan(value, MAX_MESSAGE_DEPTH)) {
    const message = `nested deeper than ${MAX_MESSAGE_DEPTH} levels of objects and arrays`;
    return { ok: false, error: { code: INVALID_MESSAGE, message }, owner: ownerOf(key, json) };
  }
  const parsed = storableMessageSchema.safeParse(json);
  if (!parsed.success) {
    const message = parsed.error.issues.map((i) => `${i.path.join('.') || '(value)'}: ${i.message}`).join('; ');
    return { ok: false, error: { code: INVALID_MESSAGE, message }, owner: ownerOf(key, json) };
  }
  return { ok: true, event: parsed.data };
}

export function ownerOfEvent(event: UsageEventMessage): RecordOwner {
  return { tenantId: event.tenant_id, environmentId: event.environment_id, eventId: event.event_id };
}
