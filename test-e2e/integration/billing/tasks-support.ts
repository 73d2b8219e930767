import { waitFor, type ApiClient } from '@billstream/testing';

/** A task as `GET /v1/tasks/{id}` answers it (docs/api/tasks.md). */
export type Task = {
  id: string;
  task_type: string;
  entity_type: string;
  file_type: string;
  task_status: string;
  total_records: number | null;
  processed_records: number;
  successful_records: number;
  failed_records: number;
  error_summary: string | null;
  errors: Array<{ line: number; message: string }>;
  file_size_bytes: number;
};

const FINISHED = ['COMPLETED', 'FAILED', 'CANCELLED'];

/** The task once it has finished (COMPLETED, FAILED or CANCELLED), polled through the gateway. */
export async function finishedTask(client: ApiClient, id: string): Promise<Task> {
  return waitFor(
    async () => {
      const res = await client.get(`/v1/tasks/${id}`);
      expect(res.status).toBe(200);
      return FINISHED.includes(res.body.task_status) ? (res.body as Task) : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: `task ${id} to finish` },
  );
}
