import { ValidationError, VersionConflictError } from '@billstream/errors';

/**
 * The ETag of one version of a resource, the same format for every resource: strong, the
 * version number in quotes (`"3"`). The version starts at 1 and grows with every change.
 */
export function etagOf(version: number): string {
  return `"${version}"`;
}

/** One entity-tag of RFC 9110 (8.8.3): optional `W/`, then a quoted string without `"`. */
const ENTITY_TAG = '(?:W/)?"[\\x21\\x23-\\x7e\\x80-\\xff]*"';
const ENTITY_TAG_LIST = new RegExp(`^\\s*${ENTITY_TAG}\\s*(?:,\\s*${ENTITY_TAG}\\s*)*$`);

/** The entity tags of an If-Match list; a value that is not one gives a 400 naming If-Match. */
function entityTags(header: string): string[] {
  if (!ENTITY_TAG_LIST.test(header)) {
    throw new ValidationError('If-Match must be `*` or the ETag of this resource, e.g. "3"', { field: 'If-Match', value: header });
  }
  return header.match(new RegExp(ENTITY_TAG, 'g')) ?? [];
}

/**
 * Whether an update with this If-Match header may change the resource whose current ETag
 * is `current` (RFC 9110 13.1.1): no header or `*` always may; otherwise one of the listed
 * entity tags must equal `current` by strong comparison, so a weak tag (`W/"3"`) never
 * matches. Throws a ValidationError (400, field If-Match) for a value that is not an
 * entity-tag list.
 */
export function matchesIfMatch(header: string | undefined, current: string): boolean {
  if (header === undefined || header.trim() === '*') return true;
  return entityTags(header).some((tag) => !tag.startsWith('W/') && tag === current);
}

/**
 * Throws the 409 `version_conflict` of a stale If-Match (`details.field` If-Match,
 * `details.current_etag`) unless `matchesIfMatch` lets an update of version `version` of
 * `what` (e.g. `Plan plan_01...`) go ahead.
 */
export function assertIfMatch(header: string | undefined, version: number, what: string): void {
  const current = etagOf(version);
  if (!matchesIfMatch(header, current)) {
    throw new VersionConflictError(`${what} was modified by another request; read it again`, { field: 'If-Match', current_etag: current });
  }
}
