import type { ConsumedMessage } from '@billstream/bus';
import type { Db, Migration, Trx } from '@billstream/db';
import type { Logger } from '@billstream/logger';
import { recordDeadLettered } from '@billstream/observability';

/**
 * How often a consumer tries one message before it sets it aside (ADR 0055): `maxAttempts`
 * tries, `firstDelayMs` before the second, doubling up to `maxDelayMs`.
 */
export interface ConsumerRetryPolicy {
  maxAttempts: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

function intSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer of at least ${min} (got "${raw}")`);
  return value;
}

/** The policy of `CONSUMER_MAX_ATTEMPTS` (default 6) and `CONSUMER_RETRY_MAX_MS` (default 5000), docs/operations.md. */
export function consumerRetryPolicy(env: NodeJS.ProcessEnv = process.env): ConsumerRetryPolicy {
  const maxDelayMs = intSetting(env, 'CONSUMER_RETRY_MAX_MS', 5000, 0);
  return { maxAttempts: intSetting(env, 'CONSUMER_MAX_ATTEMPTS', 6, 1), firstDelayMs: Math.min(250, maxDelayMs), maxDelayMs };
}

/** The pause after failed attempt `attempt` (1-based). */
export function retryDelayMs(policy: ConsumerRetryPolicy, attempt: number): number {
  return Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** (attempt - 1));
}

/** The consumer dead letters of a service, in its own schema (ADR 0055). */
export function consumerDeadLettersMigration(schema: string): Migration {
  return {
    name: 'outbox_001_consumer_dead_letters',
    async up(db) {
      await db.schema.withSchema(schema).createTable('consumer_dead_letters', (t) => {
        t.specificType('id', 'bigint generated always as identity').primary();
        t.text('consumer_group').notNullable();
        t.text('message_id').notNullable();
        t.text('topic').notNullable();
        t.integer('partition').notNullable();
        t.text('message_offset').notNullable();
        t.text('message_key').notNullable();
        t.text('value').notNullable();
        t.jsonb('headers').notNullable().defaultTo('{}');
        t.text('error').notNullable();
        t.jsonb('error_detail');
        t.integer('attempts').notNullable();
        t.timestamp('dead_lettered_at', { useTz: true }).notNullable().defaultTo(db.fn.now());
        t.unique(['consumer_group', 'message_id']);
      });
    },
    async down(db) {
      await db.schema.withSchema(schema).dropTable('consumer_dead_letters');
    },
  };
}

/** Postgres text holds no NUL character: it is kept escaped. */
const withoutNul = (text: string) => text.split(String.fromCharCode(0)).join('\\u0000');

/** What a dead letter keeps of an error: its message, and its name, code and stack when it has them. */
function describe(err: unknown): { error: string; detail: Record<string, unknown> } {
  if (!(err instanceof Error)) return { error: String(err), detail: {} };
  const e = err as Error & { code?: unknown; kind?: unknown; cause?: unknown };
  const cause = e.cause instanceof Error ? e.cause.message : undefined;
  return { error: err.message || err.name, detail: { name: err.name, code: e.code, kind: e.kind, cause, stack: err.stack?.slice(0, 4000) } };
}

/**
 * Sets a message aside: its dead letter (raw key, value and headers, the error, the attempts)
 * and its id as processed, in `trx`, so a redelivery skips it. A row already there is kept.
 */
export async function writeDeadLetter(trx: Trx, group: string, id: string, message: ConsumedMessage, err: unknown, attempts: number): Promise<void> {
  const { error, detail } = describe(err);
  await trx('consumer_dead_letters')
    .insert({
      consumer_group: group,
      message_id: id,
      topic: message.topic,
      partition: message.partition,
      message_offset: message.offset,
      message_key: message.key,
      value: withoutNul(message.value),
      headers: JSON.stringify(message.headers),
      error: withoutNul(error),
      error_detail: JSON.stringify(detail),
      attempts,
    })
    .onConflict(['consumer_group', 'message_id'])
    .ignore();
  await trx('processed_messages').insert({ consumer_group: group, message_id: id }).onConflict(['consumer_group', 'message_id']).ignore();
}

/** Writes the dead letter in a transaction of its own, with its log line and metric. */
export async function deadLetter(db: Db, logger: Logger, group: string, id: string, message: ConsumedMessage, err: unknown, attempts: number): Promise<void> {
  await db.transaction((trx) => writeDeadLetter(trx, group, id, message, err, attempts));
  recordDeadLettered(group, message.topic);
  logger.error('consumer message dead-lettered', {
    group,
    topic: message.topic,
    partition: message.partition,
    offset: message.offset,
    message_id: id,
    attempts,
    err,
  });
}
