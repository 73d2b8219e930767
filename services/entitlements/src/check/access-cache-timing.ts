/** The entitlement check cache's timings (`AccessCache`), each with the reason for its value. */

/** How long a replica keeps what it read: bounds what a change made on another replica takes to count here (ADR 0022). */
export const GRANTS_TTL_MS = 1000;
/**
 * The same while the replica hears the other replicas' changes (`AccessNotices`, ADR 0025):
 * they invalidate at once, and this bounds only a change whose writer died between its commit
 * and its notice.
 */
export const GRANTS_TTL_NOTIFIED_MS = 15_000;
/** Usage read from the aggregator is served for at most this long (docs/api/entitlements.md#post-v1entitlementscheck: usage counts accepted events within 2 s). */
export const USAGE_TTL_MS = 1000;
/**
 * The same while this replica hears every usage-recorded notification (`UsageNotices`, ADR
 * 0026): a notice drops the customer's usage at once, and this bounds only what no notice and
 * no reset covers.
 */
export const USAGE_TTL_NOTIFIED_MS = 30_000;
/**
 * After a notice, a check may still be answered with the usage it made old while that usage is
 * being read again, for at most this long; then it waits for the read (ADR 0026).
 */
export const USAGE_REFRESH_GRACE_MS = 250;
/** After a notice that came late (the notices' path lags): usage is kept 1 s for this long. */
export const USAGE_LATE_HOLD_MS = 10_000;
/** Entries kept per map at most; past it the oldest kept goes first. */
export const MAX_ENTRIES = 100_000;
/**
 * Grants, features and customers in use are read again in the background once they are older
 * than this share of their lifetime, drawn per entry between the two bounds: entries loaded
 * together (a replica's first second of checks) spread their reloads over a third of the
 * lifetime instead of all expiring at once, and no check waits for a reload of what it uses.
 * The lifetime itself still bounds what a served value may have missed.
 */
export const REFRESH_AHEAD_FROM = 0.55;
export const REFRESH_AHEAD_TO = 0.9;
/**
 * Those background reloads wait this long, then go out together (ADR 0028, amended): the
 * grants and customers of every entry due within it are read in one batch (`Coalescer`)
 * instead of a few statements per customer. At 1,000 customers and a 15 s lifetime that was
 * ~220 statements a second of single-customer reads. No check waits for a background reload,
 * and an entry is due long before its lifetime ends.
 */
export const REFRESH_GATHER_MS = 250;
/**
 * How often entries in use are read again at their refresh point even when no check comes
 * between that point and their end (`refreshDue`). Hits alone left that to chance: a customer
 * checked every 2 s on average found ~17 % of its entries expired, and those checks waited for
 * a read (measured: 15-44 a second of 1,000 checks a second in the check bench).
 */
export const REFRESH_SWEEP_MS = 250;
