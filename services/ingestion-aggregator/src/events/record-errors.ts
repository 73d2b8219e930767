import { pgErrorCode } from '@billstream/errors';

/** Why one record cannot be stored: a SQLSTATE, or a code of the consumer's own checks. */
export interface RecordError {
  code: string;
  message: string;
}

/** The message value is not JSON. */
export const INVALID_JSON = 'invalid_json';
/** The message value is JSON but not a usage-events message the aggregator can store. */
export const INVALID_MESSAGE = 'invalid_message';

/**
 * SQLSTATE classes that a record's own content causes, the same on every retry:
 * - 22 data_exception: 22P02 invalid_text_representation (a lone or reversed UTF-16 surrogate
 *   escape in JSON), 22P05 untranslatable_character (`\u0000` into text or jsonb), 22021
 *   character_not_in_repertoire (a NUL byte), 22003 numeric_value_out_of_range (`1e999999`),
 *   22007/22008 datetime, 2202E array subscript, 22001 string too long, ...;
 * - 54 program_limit_exceeded: 54001 statement_too_complex ("stack depth limit exceeded":
 *   JSON nested deeper than the server's stack allows), 54000 (a value beyond a size limit).
 * Everything else (connection lost, 40001/40P01, 57P01 admin shutdown, 53xxx resources, 55P03,
 * 57014 timeouts, no SQLSTATE at all) is not the record's fault: the batch is retried whole.
 */
const RECORD_CLASSES = new Set(['22', '54']);

/** The record error `err` is, or undefined when it is transient or systemic (retry the whole batch). */
export function recordErrorOf(err: unknown): RecordError | undefined {
  const code = pgErrorCode(err);
  if (code === undefined || !RECORD_CLASSES.has(code.slice(0, 2))) return undefined;
  const { message, detail } = err as { message?: string; detail?: string };
  return { code, message: detail ? `${message}: ${detail}` : String(message) };
}
