import type { ServiceName } from '@billstream/contracts';
import type { RequestContext } from '@billstream/http';
import type { ServiceProxy } from '../proxy';

/** An owner's answer the portal does not use as data: sent on to the portal caller as it is (its status and envelope). */
export class OwnerAnswer extends Error {
  constructor(
    readonly status: number,
    readonly payload: Buffer,
  ) {
    super(`owner answered ${status}`);
  }
}

/**
 * Reads of the owners' existing public routes on behalf of a portal session or a session's
 * creation (ADR 0069): over the gateway's proxy, with the session's tenant and environment, as
 * the gateway forwards any call. `get` returns the JSON of a 200, undefined for a 404, and
 * throws `OwnerAnswer` for anything else.
 */
export class Owners {
  constructor(private readonly proxy: ServiceProxy) {}

  async get<T>(service: ServiceName, ctx: RequestContext, path: string): Promise<T | undefined> {
    const answer = await this.proxy.forwardLean(service, ctx, 'GET', path, undefined, {});
    if (answer.status === 200) return JSON.parse(answer.payload.toString('utf8')) as T;
    if (answer.status === 404) return undefined;
    throw new OwnerAnswer(answer.status, answer.payload);
  }

  /** `get` where a 404 is an answer too (an id the caller did not choose: a plan, an upcoming invoice). */
  async maybe<T>(service: ServiceName, ctx: RequestContext, path: string): Promise<T | undefined> {
    const answer = await this.proxy.forwardLean(service, ctx, 'GET', path, undefined, {});
    return answer.status === 200 ? (JSON.parse(answer.payload.toString('utf8')) as T) : undefined;
  }
}

/** A path segment from an id (never a slash or a query of the caller's). */
export const seg = (id: string) => encodeURIComponent(id);
