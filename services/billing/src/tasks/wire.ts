import type { ListTasksQuery, TaskEntity, TaskFileType, TaskFilters } from '@billstream/contracts';
import type { NewExport, NewImport, TaskListQuery } from './domain';

/** `POST /v1/tasks/exports`'s body as the service takes it (ADR 0063). */
export function newExportOf(b: { entity_type: TaskEntity; file_type: TaskFileType; filters?: TaskFilters }): NewExport {
  const f = b.filters;
  return {
    entityType: b.entity_type,
    fileType: b.file_type,
    ...(f
      ? {
          filters: {
            ...(f.start_time !== undefined ? { startTime: f.start_time } : {}),
            ...(f.end_time !== undefined ? { endTime: f.end_time } : {}),
            ...(f.external_customer_id !== undefined ? { externalCustomerId: f.external_customer_id } : {}),
            ...(f.currency !== undefined ? { currency: f.currency } : {}),
          },
        }
      : {}),
  };
}

/** `POST /v1/tasks/imports`'s query (the file is the body). */
export function newImportOf(q: { entity_type: TaskEntity; file_type: TaskFileType }): NewImport {
  return { entityType: q.entity_type, fileType: q.file_type };
}

export function taskListQueryOf(q: ListTasksQuery): TaskListQuery {
  return {
    ...(q.task_type !== undefined ? { taskType: q.task_type } : {}),
    ...(q.entity_type !== undefined ? { entityType: q.entity_type } : {}),
    ...(q.task_status !== undefined ? { taskStatus: q.task_status } : {}),
    limit: q.limit,
    offset: q.offset,
  };
}
