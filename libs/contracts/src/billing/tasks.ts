import { z } from 'zod';
import { isoTimestamp, listResponse, paginationQuery, type Permission } from '../common';
import { defineRoute, type RouteDef } from '../routes';
import { currencyCode } from './prices';
import { checkTaxWindow } from './reports';

/** Bulk export and import tasks (issue #15, docs/api/tasks.md), owned by the billing service (ADR 0019). */
export const TASK_TYPES = ['EXPORT', 'IMPORT'] as const;
export const TASK_EXPORT_ENTITIES = ['EVENTS', 'CUSTOMERS', 'INVOICES', 'TAX_REPORT'] as const;
export const TASK_IMPORT_ENTITIES = ['EVENTS', 'CUSTOMERS'] as const;
export const TASK_FILE_TYPES = ['CSV', 'JSONL'] as const;
export const TASK_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
export type TaskType = (typeof TASK_TYPES)[number];
export type TaskEntity = (typeof TASK_EXPORT_ENTITIES)[number];
export type TaskFileType = (typeof TASK_FILE_TYPES)[number];
export type TaskStatus = (typeof TASK_STATUSES)[number];

/**
 * What a task needs beyond `tasks:read|write` (ADR 0058): its entity's permission. Creating an
 * export, and reading any task of the entity (one, its file, the list), need `read`; creating
 * an import needs `write`; cancelling needs what creating it did.
 */
export const TASK_ENTITY_PERMISSIONS: Record<TaskEntity, { read: Permission; write: Permission }> = {
  EVENTS: { read: 'events:read', write: 'events:write' },
  CUSTOMERS: { read: 'customers:read', write: 'customers:write' },
  INVOICES: { read: 'invoices:read', write: 'invoices:write' },
  TAX_REPORT: { read: 'taxes:read', write: 'taxes:write' },
};

/** The permission creating (and cancelling) a task of `type` and `entity` needs beyond `tasks:write`. */
export function taskCreatePermission(type: TaskType, entity: TaskEntity): Permission {
  return type === 'EXPORT' ? TASK_ENTITY_PERMISSIONS[entity].read : TASK_ENTITY_PERMISSIONS[entity].write;
}

/** Largest import file: 100 MiB (docs/api/tasks.md). */
export const MAX_IMPORT_BYTES = 100 * 1024 * 1024;
/** Row errors kept on a task (the first ones, by line). */
export const MAX_TASK_ERRORS = 100;

const oneOf = <T extends readonly [string, ...string[]]>(values: T) => z.enum(values, `must be one of ${values.join(', ')}`);

export const taskFilters = z
  .strictObject({
    start_time: isoTimestamp.optional(),
    end_time: isoTimestamp.optional(),
    external_customer_id: z.string().min(1, 'must not be empty').max(255).optional(),
    /** TAX_REPORT only: the one currency to report. */
    currency: currencyCode.optional(),
  })
  .superRefine((v, ctx) => {
    if (v.start_time && v.end_time && Date.parse(v.end_time) <= Date.parse(v.start_time)) {
      ctx.addIssue({ code: 'custom', path: ['end_time'], message: 'must be after start_time' });
    }
  });
export type TaskFilters = z.output<typeof taskFilters>;

export const createExportTaskBody = z
  .strictObject({
    task_type: z.literal('EXPORT', 'must be EXPORT (imports are POST /v1/tasks/imports with the file as the body)'),
    entity_type: oneOf(TASK_EXPORT_ENTITIES),
    file_type: oneOf(TASK_FILE_TYPES),
    filters: taskFilters.optional(),
  })
  .superRefine((b, ctx) => {
    const f = b.filters ?? {};
    if (b.entity_type !== 'TAX_REPORT') {
      if (f.currency !== undefined) ctx.addIssue({ code: 'custom', path: ['filters', 'currency'], message: 'only a TAX_REPORT export takes a currency' });
      return;
    }
    // The tax report's window (docs/api/taxes.md#tax-report): both ends, at most 366 days.
    if (f.external_customer_id !== undefined) ctx.addIssue({ code: 'custom', path: ['filters', 'external_customer_id'], message: 'a TAX_REPORT export is of the whole environment' });
    if (f.start_time === undefined) ctx.addIssue({ code: 'custom', path: ['filters', 'start_time'], message: 'is required for a TAX_REPORT export' });
    if (f.end_time === undefined) ctx.addIssue({ code: 'custom', path: ['filters', 'end_time'], message: 'is required for a TAX_REPORT export' });
    if (f.start_time === undefined || f.end_time === undefined) return;
    const bad = checkTaxWindow(f.start_time, f.end_time);
    if (bad) ctx.addIssue({ code: 'custom', path: ['filters', bad.path === 'to' ? 'end_time' : 'start_time'], message: bad.message.replace('from', 'start_time') });
  });

/** The file is the raw body; these are in the query string. */
export const createImportTaskQuery = z.strictObject({
  entity_type: oneOf(TASK_IMPORT_ENTITIES),
  file_type: oneOf(TASK_FILE_TYPES),
});

export const listTasksQuery = z.strictObject({
  ...paginationQuery,
  task_type: oneOf(TASK_TYPES).optional(),
  entity_type: oneOf(TASK_EXPORT_ENTITIES).optional(),
  task_status: oneOf(TASK_STATUSES).optional(),
});
export type ListTasksQuery = z.output<typeof listTasksQuery>;

export const taskSchema = z
  .object({
    id: z.string(),
    task_type: z.enum(TASK_TYPES),
    entity_type: z.enum(TASK_EXPORT_ENTITIES),
    file_type: z.enum(TASK_FILE_TYPES),
    task_status: z.enum(TASK_STATUSES),
    filters: z.object({ start_time: z.string().optional(), end_time: z.string().optional(), external_customer_id: z.string().optional(), currency: z.string().optional() }),
    /** Records in the file (imports: data lines; exports: rows written); known once the task finished, null before. */
    total_records: z.number().int().nullable(),
    processed_records: z.number().int(),
    successful_records: z.number().int(),
    failed_records: z.number().int(),
    /** Why the task FAILED, or a one-line summary of row errors; null when there is none. */
    error_summary: z.string().nullable(),
    /** The first 100 bad rows: `line` is the file's 1-based line (a CSV header is line 1). */
    errors: z.array(z.object({ line: z.number().int(), message: z.string() })),
    /** Bytes of the uploaded file (imports) or of the export written so far. */
    file_size_bytes: z.number().int(),
    created_at: z.string(),
    started_at: z.string().nullable(),
    completed_at: z.string().nullable(),
    tenant_id: z.string(),
    environment_id: z.string(),
  })
  .meta({ id: 'Task' });
export type TaskResponse = z.infer<typeof taskSchema>;

const idParams = z.strictObject({ id: z.string().min(1).max(255) });
const emptyBody = z.strictObject({});
const tag = 'Tasks';

export const taskApi = {
  createExportTask: defineRoute({
    operationId: 'createExportTask',
    method: 'post',
    path: '/v1/tasks',
    service: 'billing',
    permission: 'tasks:write',
    summary: 'Start a bulk export of events, customers, invoices or the tax report as CSV or JSONL (runs in the background)',
    tag,
    body: createExportTaskBody,
    response: taskSchema,
    status: 202,
  }),
  createImportTask: defineRoute({
    operationId: 'createImportTask',
    method: 'post',
    path: '/v1/tasks/imports',
    service: 'billing',
    permission: 'tasks:write',
    summary: 'Upload a CSV or JSONL file of events or customers (the raw body, up to 100 MiB, any Content-Type) and import it in the background',
    tag,
    query: createImportTaskQuery,
    response: taskSchema,
    status: 202,
    errors: [413],
    rawBody: { maxBytes: MAX_IMPORT_BYTES },
  }),
  listTasks: defineRoute({
    operationId: 'listTasks',
    method: 'get',
    path: '/v1/tasks',
    service: 'billing',
    permission: 'tasks:read',
    summary: 'List tasks, newest first',
    tag,
    query: listTasksQuery,
    response: listResponse(taskSchema),
    status: 200,
  }),
  getTask: defineRoute({
    operationId: 'getTask',
    method: 'get',
    path: '/v1/tasks/:id',
    service: 'billing',
    permission: 'tasks:read',
    summary: 'One task with its progress and row errors',
    tag,
    params: idParams,
    response: taskSchema,
    status: 200,
    errors: [404],
  }),
  downloadTask: defineRoute({
    operationId: 'downloadTask',
    method: 'get',
    path: '/v1/tasks/:id/download',
    service: 'billing',
    permission: 'tasks:read',
    summary: "Stream a COMPLETED export's file (text/csv or application/x-ndjson)",
    tag,
    params: idParams,
    status: 200,
    errors: [404],
    streamsResponse: { contentTypes: ['text/csv', 'application/x-ndjson'] },
  }),
  cancelTask: defineRoute({
    operationId: 'cancelTask',
    method: 'post',
    path: '/v1/tasks/:id/cancel',
    service: 'billing',
    permission: 'tasks:write',
    summary: 'Cancel a PENDING or PROCESSING task (a finished one: 400)',
    tag,
    params: idParams,
    body: emptyBody,
    response: taskSchema,
    status: 200,
    errors: [404],
  }),
};

export const taskRoutes: RouteDef[] = Object.values(taskApi) as RouteDef[];
