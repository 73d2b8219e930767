import type { Express } from 'express';
import { taskApi } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { TaskService } from './service';

export function mountTaskRoutes(app: Express, tasks: TaskService, logger: Logger): void {
  mountRoute(app, taskApi.createExportTask, async ({ body, ctx }) => tasks.createExport(ctx, ctx.actor, body), logger);
  mountRoute(
    app,
    taskApi.createImportTask,
    async ({ query, ctx, req }) => {
      const declared = req.headers['content-length'];
      return tasks.createImport(ctx, ctx.actor, query, req, declared === undefined ? undefined : Number(declared));
    },
    logger,
  );
  mountRoute(app, taskApi.listTasks, async ({ query, ctx }) => tasks.list(ctx, query), logger);
  mountRoute(app, taskApi.getTask, async ({ params, ctx }) => tasks.get(ctx, params.id), logger);
  mountRoute(app, taskApi.cancelTask, async ({ params, ctx }) => tasks.cancel(ctx, params.id), logger);
  mountRoute(
    app,
    taskApi.downloadTask,
    async ({ params, ctx, res }) => {
      const file = await tasks.download(ctx, params.id);
      res.status(200).set(file.headers);
      res.flushHeaders();
      await file.write(res);
    },
    logger,
  );
}
