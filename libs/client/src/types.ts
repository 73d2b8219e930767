/**
 * Types of a call, read off the generated `paths` of docs/openapi.json: which paths take a
 * method, what a call must pass (path, query and header parameters, the JSON body) and what
 * a success answers. Types only: nothing here exists at run time.
 */
import type { components, paths } from './generated/openapi';

export type { components, paths };
export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The paths that have an operation for `M` (the generator marks the others `?: never`). */
export type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never;
}[keyof paths];

export type Operation<P extends keyof paths, M extends Method> = paths[P] extends { [K in M]: infer O } ? O : never;

type Defined<T> = Exclude<T, undefined>;
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];

/** `params.path`, `params.query` and `params.header` of an operation, without the absent ones. */
type ParamsOf<O> = O extends { parameters: infer Prm }
  ? { [K in keyof Prm as K extends 'cookie' ? never : [Defined<Prm[K]>] extends [never] ? never : K]: Prm[K] }
  : object;

type JsonBodyOf<O> = O extends { requestBody?: infer B }
  ? [Defined<B>] extends [never]
    ? never
    : Defined<B> extends { content: { 'application/json': infer J } }
      ? J
      : never
  : never;

/** What a call passes besides the path: params when the operation has any, and its body. */
export type CallInit<O> = CallOptions &
  (RequiredKeys<ParamsOf<O>> extends never ? { params?: ParamsOf<O> } : { params: ParamsOf<O> }) &
  ([JsonBodyOf<O>] extends [never] ? { body?: never } : { body: JsonBodyOf<O> });

/** A call's init is optional when nothing in it is required. */
export type InitArgs<O> = RequiredKeys<CallInit<O>> extends never ? [init?: CallInit<O>] : [init: CallInit<O>];

type SuccessStatus = 200 | 201 | 202 | 204;
type ContentOf<R> = R extends { content: { 'application/json': infer C } } ? C : undefined;

/** The JSON body of a success (2xx) answer; `undefined` for 204. */
export type SuccessOf<O> = O extends { responses: infer R }
  ? { [S in keyof R]: S extends SuccessStatus ? ContentOf<R[S]> : never }[keyof R]
  : never;

export type RequestBody<P extends keyof paths, M extends Method> = JsonBodyOf<Operation<P, M>>;
export type ResponseBody<P extends keyof paths, M extends Method> = SuccessOf<Operation<P, M>>;

/** Per-call settings, beside the client's. */
export interface CallOptions {
  /** Extra request headers (e.g. `If-Match`). */
  headers?: Record<string, string>;
  /** Aborts the call, retries included. */
  signal?: AbortSignal;
  /** Time allowed for each attempt (default: the client's `timeoutMs`). */
  timeoutMs?: number;
  /** Sent as `X-Request-Id` on every attempt (default: a fresh id per call). */
  requestId?: string;
}
