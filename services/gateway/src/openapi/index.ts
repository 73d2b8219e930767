import type { Request, Response } from 'express';
import { buildOpenApiDocument } from './document';

export { buildOpenApiDocument, OPENAPI_PATH, type OpenApiDocument } from './document';

/** Serves the generated document (built once, on first request). */
export function openApiHandler() {
  let body: string | undefined;
  return (_req: Request, res: Response) => {
    body ??= JSON.stringify(buildOpenApiDocument());
    res.type('application/json').send(body);
  };
}
