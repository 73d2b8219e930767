import type { TaskEntity, TaskFileType, TaskStatus, TaskType } from '@billstream/contracts';

/** An export as asked (ADR 0063): what to export, in which format, and the records' window and customer (TAX_REPORT: its window and currency). */
export interface NewExport {
  entityType: TaskEntity;
  fileType: TaskFileType;
  filters?: { startTime?: string; endTime?: string; externalCustomerId?: string; currency?: string };
}

/** An import as asked: what the uploaded file holds, in which format. */
export interface NewImport {
  entityType: TaskEntity;
  fileType: TaskFileType;
}

export interface TaskListQuery {
  taskType?: TaskType;
  entityType?: TaskEntity;
  taskStatus?: TaskStatus;
  limit: number;
  offset: number;
}
