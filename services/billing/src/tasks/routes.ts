import type { Express } from 'express';
import { taskApi } from '@billstream/contracts';
import { mountRoute } from '@billstream/http';
import type { Logger } from '@billstream/logger';
import type { TaskService } from './service';
import { toTaskView } from './store';
import { newExportOf, newImportOf, taskListQueryOf } from './wire';

export function mountTaskRoutes(app: Express, tasks: TaskService, logger: Logger): void {
  mountRoute(app, taskApi.createExportTask, async ({ body, ctx }) => toTaskView(await tasks.createExport(ctx, ctx.actor, newExportOf(body))), logger);
  mountRoute(
    app,
    taskApi.createImportTask,
    async ({ query, ctx, req }) => {
      const declared = req.headers['content-length'];
      return toTaskView(await tasks.createImport(ctx, ctx.actor, newImportOf(query), req, declared === undefined ? undefined : Number(declared)));
    },
    logger,
  );
  mountRoute(
    app,
    taskApi.listTasks,
    async ({ query, ctx }) => {
      const { items, total } = await tasks.list(ctx, taskListQueryOf(query));
      return { items: items.map(toTaskView), pagination: { total, limit: query.limit, offset: query.offset } };
    },
    logger,
  );
  mountRoute(app, taskApi.getTask, async ({ params, ctx }) => toTaskView(await tasks.get(ctx, params.id)), logger);
  mountRoute(app, taskApi.cancelTask, async ({ params, ctx }) => toTaskView(await tasks.cancel(ctx, params.id)), logger);
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
