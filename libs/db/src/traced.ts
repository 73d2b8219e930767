import type { Knex } from 'knex';
import { inActiveSpan, markFailed, SpanKind, startSpan, tracingEnabled } from '@billstream/observability';

type QueryEvent = { __knexQueryUid?: string; method?: string; sql?: string };

/** Knex instances already traced (the embedded databases hand out one per schema, asked often). */
const traced = new WeakSet<Knex>();

/**
 * A client span per database statement run inside a span when tracing is on (ADR 0020), child
 * of that span (knex emits `query` in the caller's async context). The statement's SQL text is
 * kept (its values are bound parameters, never in it); without tracing nothing is attached.
 */
export function traceQueries(db: Knex, schema: string): Knex {
  if (!tracingEnabled() || traced.has(db)) return db;
  traced.add(db);
  const open = new Map<string, NonNullable<ReturnType<typeof startSpan>>>();
  db.on('query', (q: QueryEvent) => {
    // Only inside a request, a consumed batch or a delivery: the relays' and jobs' idle polls would each be a trace.
    if (!q.__knexQueryUid || !inActiveSpan()) return;
    const span = startSpan(`db ${q.method ?? 'query'} ${schema}`, SpanKind.CLIENT, undefined, {
      'db.system.name': 'postgresql',
      'db.namespace': schema,
      'db.operation.name': q.method ?? 'raw',
      'db.query.text': (q.sql ?? '').slice(0, 2000),
    });
    if (span) open.set(q.__knexQueryUid, span);
  });
  const end = (failed: boolean) => (_a: unknown, q: QueryEvent) => {
    const span = q?.__knexQueryUid ? open.get(q.__knexQueryUid) : undefined;
    if (!span) return;
    open.delete(q.__knexQueryUid as string);
    if (failed) markFailed(span);
    span.end();
  };
  db.on('query-response', end(false));
  db.on('query-error', end(true));
  return db;
}
