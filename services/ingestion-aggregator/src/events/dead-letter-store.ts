import { createHash } from 'node:crypto';
import type { Scope } from '@billstream/contracts';
import type { Db, Trx } from '@billstream/db';
import type { RecordOwner } from './message';
import type { RecordError } from './record-errors';

/** A usage-events record that can never be stored, with where it sat and why. */
export interface DeadLetter {
  topic: string;
  partition: number;
  offset: string;
  key: string;
  value: string;
  owner: RecordOwner;
  error: RecordError;
}

const NUL = '\u0000';
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const EVERY_LONE_SURROGATE = new RegExp(LONE_SURROGATE.source, 'g');

/** Text Postgres stores as given, or null: a NUL or a lone surrogate would fail (or be altered by) the insert. */
function storableOrNull(v: string | undefined): string | null {
  if (v === undefined || v === '') return null;
  return v.includes(NUL) || LONE_SURROGATE.test(v) ? null : v;
}

/** Text with every NUL and lone surrogate replaced by U+FFFD (error messages may quote the record). */
function storableText(v: string): string {
  return v.replaceAll(NUL, '\ufffd').replace(EVERY_LONE_SURROGATE, '\ufffd');
}

function toRow(letter: DeadLetter) {
  const value = Buffer.from(letter.value, 'utf8');
  return {
    topic: letter.topic,
    kafka_partition: letter.partition,
    kafka_offset: letter.offset,
    value_sha256: createHash('sha256').update(value).digest(),
    kafka_key: Buffer.from(letter.key, 'utf8'),
    kafka_value: value,
    tenant_id: storableOrNull(letter.owner.tenantId),
    environment_id: storableOrNull(letter.owner.environmentId),
    event_id: storableOrNull(letter.owner.eventId),
    error_code: storableText(letter.error.code),
    error_message: storableText(letter.error.message),
  };
}

/** `event_dead_letters` (docs/ingestion-storage.md, "Dead letters"). */
export class DeadLetterStore {
  /**
   * Keeps the letters; one already kept (the same record redelivered, or another copy of the
   * same event id) is skipped. Returns how many were new.
   */
  async insert(conn: Db | Trx, letters: DeadLetter[]): Promise<number> {
    if (letters.length === 0) return 0;
    const rows = await conn('event_dead_letters').insert(letters.map(toRow)).onConflict().ignore().returning('kafka_offset');
    return rows.length;
  }

  /** Dead letters held for one tenant and environment. */
  async count(conn: Db | Trx, scope: Scope): Promise<number> {
    const rows = await conn('event_dead_letters')
      .where({ tenant_id: scope.tenantId, environment_id: scope.environmentId })
      .count<{ count: number }[]>({ count: '*' });
    return Number(rows[0]?.count ?? 0);
  }
}
