import { createHash } from 'node:crypto';
import { MAX_SEND_BYTES, toMessage, type UsageEventPublisher } from '@billstream/bus';
import {
  createCustomerBody,
  normalizeEventTimestamp,
  usageEventInput,
  type Scope,
  type TaskFileType,
  type UsageEventInput,
  type UsageEventMessage,
} from '@billstream/contracts';
import { ServiceUnavailableError } from '@billstream/errors';
import { assertStorableJson, toValidationError, type InternalClient } from '@billstream/http';
import type { z } from 'zod';
import { jsonCell } from './files';
import type { TaskRowError } from './store';

export interface ImportRow {
  line: number;
  fields: Record<string, unknown>;
}

export interface ImportResult {
  successful: number;
  errors: TaskRowError[];
}

/** What an import does with its rows, a batch at a time. */
export interface ImportSink {
  /** CSV header names it accepts. */
  columns: ReadonlySet<string>;
  /** Rows per committed batch. */
  batchSize: number;
  handle(scope: Scope, fileType: TaskFileType, rows: ImportRow[], requestId: string): Promise<ImportResult>;
}

/** The first issue of a zod failure as "field message". */
function firstIssue(error: z.ZodError): string {
  const issues = toValidationError(error).details?.issues as Array<{ field: string; message: string }> | undefined;
  const first = issues?.[0];
  if (!first) return 'is invalid';
  return first.field ? `${first.field} ${first.message}` : first.message;
}

function storable(fields: Record<string, unknown>): string | undefined {
  try {
    assertStorableJson(fields, { what: 'Row' });
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** JSON with object keys sorted: the same content always gives the same text. */
function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
    .join(',')}}`;
}

/**
 * The id of an imported event without `event_id`: derived from its content, so that importing
 * the same file twice stores it once (a generated random id would store it twice). Rows with
 * the same name, customer, timestamp, properties and source are one event.
 */
export function importedEventId(e: UsageEventInput): string {
  const key = canonical([e.event_name, e.external_customer_id, normalizeEventTimestamp(e.timestamp), e.properties ?? {}, e.source ?? null]);
  return `imp_${createHash('sha256').update(key).digest('hex').slice(0, 40)}`;
}

/** `id` (the events query's and a JSONL export's name) is taken for `event_id`: an export imports back as it is. */
export const EVENT_IMPORT_COLUMNS = new Set(['event_id', 'id', 'event_name', 'external_customer_id', 'customer_id', 'timestamp', 'source', 'properties']);

const NULL_AS_ABSENT = ['customer_id', 'source'];

/**
 * Events: each row is checked by the schema of `POST /v1/events` (usageEventInput) and the
 * edge's storable-text check, then published to usage-events by the publisher the gateway uses
 * (acks=all): the aggregator stores, deduplicates on (tenant, environment, event_id) and
 * aggregates them exactly as events sent to `POST /v1/events/bulk`.
 */
export function eventImportSink(publisher: UsageEventPublisher, batchSize: number): ImportSink {
  return {
    columns: EVENT_IMPORT_COLUMNS,
    batchSize,
    async handle(scope, fileType, rows) {
      const errors: TaskRowError[] = [];
      const messages: UsageEventMessage[] = [];
      const receivedAt = new Date().toISOString();
      for (const row of rows) {
        const fields = { ...row.fields };
        if ('id' in fields) {
          if (!('event_id' in fields)) fields.event_id = fields.id;
          delete fields.id;
        }
        // An export writes an event without them as null: absent, as an empty CSV cell is.
        for (const k of NULL_AS_ABSENT) if (fields[k] === null) delete fields[k];
        if ('properties' in fields) {
          const parsed = jsonCell(fileType, fields.properties, 'properties');
          if (parsed.error) {
            errors.push({ line: row.line, message: parsed.error });
            continue;
          }
          fields.properties = parsed.value;
        }
        const bad = storable(fields);
        if (bad) {
          errors.push({ line: row.line, message: bad });
          continue;
        }
        const result = usageEventInput.safeParse(fields);
        if (!result.success) {
          errors.push({ line: row.line, message: firstIssue(result.error) });
          continue;
        }
        const event = result.data;
        const message = toMessage({ ...event, event_id: event.event_id ?? importedEventId(event) }, scope, receivedAt);
        if (Buffer.byteLength(JSON.stringify(message)) > MAX_SEND_BYTES - 1024) {
          errors.push({ line: row.line, message: `the event is larger than ${MAX_SEND_BYTES} bytes` });
          continue;
        }
        messages.push(message);
      }
      if (messages.length > 0) await publisher.publish(messages);
      return { successful: messages.length, errors };
    },
  };
}

/** Response-only columns of a customer export, ignored on import (so that an export imports back). */
const IGNORED_CUSTOMER_COLUMNS = ['id', 'tenant_id', 'environment_id', 'created_at', 'updated_at'];
export const CUSTOMER_IMPORT_COLUMNS = new Set([
  ...Object.keys(createCustomerBody.shape),
  'external_id',
  ...IGNORED_CUSTOMER_COLUMNS,
]);

interface Envelope {
  error?: { message?: string; details?: { field?: string } };
}

/**
 * Customers: each row is a `POST /v1/customers` on the customer service (its owner), with the
 * row checked first by the same schema. A 400, 404 or 409 (the external id exists already) is
 * the row's error; anything else is the service being unavailable: the batch is retried.
 */
export function customerImportSink(client: InternalClient, batchSize: number, parallelism: number): ImportSink {
  const one = async (scope: Scope, fileType: TaskFileType, row: ImportRow, requestId: string): Promise<TaskRowError | undefined> => {
    const fields: Record<string, unknown> = { ...row.fields };
    for (const c of IGNORED_CUSTOMER_COLUMNS) delete fields[c];
    if ('external_id' in fields) {
      if (!('external_customer_id' in fields)) fields.external_customer_id = fields.external_id;
      delete fields.external_id;
    }
    if ('metadata' in fields) {
      const parsed = jsonCell(fileType, fields.metadata, 'metadata');
      if (parsed.error) return { line: row.line, message: parsed.error };
      fields.metadata = parsed.value;
    }
    const bad = storable(fields);
    if (bad) return { line: row.line, message: bad };
    const result = createCustomerBody.safeParse(fields);
    if (!result.success) return { line: row.line, message: firstIssue(result.error) };
    const { status, text } = await client.call(scope, 'POST', '/v1/customers', requestId, result.data);
    if (status === 201 || status === 200) return undefined;
    if (status === 400 || status === 404 || status === 409) {
      let body: Envelope = {};
      try {
        body = JSON.parse(text) as Envelope;
      } catch {
        /* not JSON */
      }
      return { line: row.line, message: body.error?.message ?? `refused by the customer service (${status})` };
    }
    throw new ServiceUnavailableError(`The customer service answered ${status}; the task retries`);
  };
  return {
    columns: CUSTOMER_IMPORT_COLUMNS,
    batchSize,
    async handle(scope, fileType, rows, requestId) {
      const results: Array<TaskRowError | undefined> = new Array(rows.length);
      // Rows run `parallelism` at once, except that a row repeating an external id of an
      // earlier row of the batch runs after it: the file's first row of an id wins.
      const seen = new Set<unknown>();
      const first: number[] = [];
      const repeats: number[] = [];
      rows.forEach((row, i) => {
        const key = row.fields.external_customer_id ?? row.fields.external_id;
        if (key !== undefined && seen.has(key)) repeats.push(i);
        else first.push(i);
        seen.add(key);
      });
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(parallelism, first.length) }, async () => {
          while (next < first.length) {
            const i = first[next++];
            results[i] = await one(scope, fileType, rows[i], requestId);
          }
        }),
      );
      for (const i of repeats) results[i] = await one(scope, fileType, rows[i], requestId);
      const errors = results.filter((e): e is TaskRowError => e !== undefined);
      return { successful: rows.length - errors.length, errors };
    },
  };
}
