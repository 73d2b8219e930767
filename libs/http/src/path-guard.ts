import { ValidationError } from '@billstream/errors';

function refuse(segment: string, message: string): ValidationError {
  return new ValidationError(`Path is invalid: ${message}`, { field: 'path', segment, issues: [{ field: 'path', message }] });
}

/**
 * Refuses, before routing, a path whose segments are not valid percent-encoded UTF-8
 * (`%`, `%zz`, `%ff%fe`, the overlong `%C0%AE`, an encoded surrogate) or decode to a NUL
 * (`%00`): 400 `validation_error` with `details.field: "path"` and the raw segment. The
 * router would otherwise fail to decode the id (a 500), or hand a NUL to Postgres.
 */
export function assertDecodablePath(path: string): void {
  if (!path.includes('%')) return;
  for (const segment of path.split('/')) {
    if (!segment.includes('%')) continue;
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw refuse(segment, `segment "${segment}" is not valid percent-encoded UTF-8`);
    }
    if (decoded.includes('\u0000')) throw refuse(segment, `segment "${segment}" must not contain NUL characters (%00)`);
  }
}
