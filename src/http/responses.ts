import { JSON_HEADERS } from './errors';

/**
 * What an answer's type records of it, for the route to check against its declared `responses`
 * (a phantom: nothing of it exists at run time). A handler answers only these, so a body of the
 * wrong shape for a declared status fails `tsc`, as `@hono/zod-openapi`'s `c.json` does.
 */
declare const ANSWER: unique symbol;

/** A JSON answer: its status and the type of its body. */
export interface JsonAnswer<Status extends number, Body> extends Response {
  readonly [ANSWER]: { readonly kind: 'json'; readonly status: Status; readonly body: Body };
}

/** An answer with no body. */
export interface EmptyAnswer<Status extends number> extends Response {
  readonly [ANSWER]: { readonly kind: 'empty'; readonly status: Status };
}

/** An answer the route's types do not describe (a stream, a 304, a redirect, a page): see `untyped`. */
export interface UntypedAnswer extends Response {
  readonly [ANSWER]: { readonly kind: 'untyped' };
}

// Without a status the answer is a 200: an overload, so that the status is not inferred from
// the statuses the route declares.
export function json<Body>(body: Body): JsonAnswer<200, Body>;
export function json<Body, const Status extends number>(
  body: Body,
  status: Status,
  headers?: Record<string, string>,
): JsonAnswer<Status, Body>;
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

/** A status with no body (Unleash answers 200 with an empty body on many writes). */
export function empty(): EmptyAnswer<200>;
export function empty<const Status extends number>(status: Status, headers?: Record<string, string>): EmptyAnswer<Status>;
export function empty(status = 200, headers: Record<string, string> = {}): Response {
  return new Response(null, { status, headers });
}

/**
 * The way out of the typed answers, to be taken explicitly: an answer built by hand (a stream of
 * events, a 304, a redirect, HTML, bytes served as they are stored). The test suite still checks
 * its status and any JSON body against the document (test/support/documented-responses.ts).
 */
export function untyped(response: Response): UntypedAnswer {
  return response as UntypedAnswer;
}

/** For every response that carries a secret (a new API token, invite links): never cached. */
export const NO_STORE = { 'cache-control': 'no-store' } as const;
