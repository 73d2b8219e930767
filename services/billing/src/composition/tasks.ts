/**
 * Tasks' composition (ADR 0019): files in billing's schema; exports read the owners' data, imports
 * write through them. On the embedded database every statement holds the one session: smaller
 * steps (ADR 0036).
 */
import { UsageEventPublisher } from '@billstream/bus';
import { MAX_IMPORT_BYTES } from '@billstream/contracts';
import { isEmbedded, type Db } from '@billstream/db';
import { InternalClient } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { ServiceDeps } from '@billstream/runtime';
import type { BillingSettings } from '../config';
import type { InvoiceStore } from '../invoices/store';
import { taxReport } from '../reports/tax-report';
import { customerSource, eventSource, invoiceSource, taxReportSource } from '../tasks/exports';
import { customerImportSink, eventImportSink } from '../tasks/imports';
import { TaskRunner } from '../tasks/runner';
import { EMBEDDED_TASK_SIZES, INPUT_CHUNK_BYTES, TaskService } from '../tasks/service';
import { TaskStore } from '../tasks/store';

export interface TaskComposition {
  tasks: TaskService;
  taskRunner: TaskRunner;
  /** Closes the task clients' connections. */
  close(): Promise<void>;
}

export function composeTasks(
  base: { db: Db; bus: ServiceDeps['bus']; logger: Logger; clock: () => Date; settings: BillingSettings },
  services: { internalToken: string; ingestionUrl: () => string | undefined; customerUrl: () => string | undefined; invoices: InvoiceStore },
): TaskComposition {
  const { db, bus, logger, clock, settings } = base;
  const embedded = isEmbedded(db);
  const batchRows = embedded ? Math.min(settings.tasksBatchRows, EMBEDDED_TASK_SIZES.batchRows) : settings.tasksBatchRows;
  const store = new TaskStore();
  const client = (service: string, baseUrl: () => string | undefined, timeoutMs: number) => new InternalClient({ service, baseUrl, internalToken: services.internalToken, actor: 'billing-tasks', timeoutMs });
  const ingestion = client('ingestion-aggregator', services.ingestionUrl, 60_000);
  const customers = client('customer', services.customerUrl, 30_000);
  const publisher = new UsageEventPublisher(bus, logger, { queueTimeoutMs: 30_000 });
  const taskRunner = new TaskRunner({
    db,
    store,
    exports: {
      EVENTS: eventSource(ingestion, batchRows),
      CUSTOMERS: customerSource(customers),
      INVOICES: invoiceSource(db, services.invoices, Math.min(2000, batchRows)),
      TAX_REPORT: taxReportSource((scope, q) => taxReport(db, scope, q)),
    },
    imports: { EVENTS: eventImportSink(publisher, batchRows), CUSTOMERS: customerImportSink(customers, Math.min(500, batchRows), 8) },
    logger,
    clock,
    settings: { pollMs: settings.tasksPollMs, leaseMs: settings.tasksLeaseMs, maxAttempts: 5 },
  });
  const tasks = new TaskService({
    db,
    store,
    clock,
    created: () => taskRunner.poke(),
    maxImportBytes: MAX_IMPORT_BYTES,
    inputPieceBytes: embedded ? EMBEDDED_TASK_SIZES.inputPieceBytes : INPUT_CHUNK_BYTES,
  });
  return {
    tasks,
    taskRunner,
    async close() {
      await ingestion.close();
      await customers.close();
    },
  };
}
