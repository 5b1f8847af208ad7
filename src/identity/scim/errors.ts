/**
 * SCIM's own error body (RFC 7644 §3.12) and media type. Every SCIM route renders whatever it
 * throws here (its route's `renderError`): a ScimError as it is, the router's Unleash errors
 * (413, 415, 429, a body that is not JSON) in the same shape, anything else as a logged 500.
 */
import { ApiError } from '../../http/errors';
import { log, redactPath } from '../../log';

export const SCIM_MEDIA_TYPE = 'application/scim+json';
const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** RFC 7644's `scimType` values for 400s (and `uniqueness` for 409, `mutability`). */
export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'invalidVers'
  | 'sensitive';

export class ScimError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly scimType?: ScimType,
  ) {
    super(detail);
  }
}

export const invalidValue = (detail: string) => new ScimError(400, detail, 'invalidValue');
export const invalidSyntax = (detail: string) => new ScimError(400, detail, 'invalidSyntax');
export const invalidFilter = (detail: string) => new ScimError(400, detail, 'invalidFilter');
export const uniqueness = (detail: string) => new ScimError(409, detail, 'uniqueness');
export const resourceNotFound = (kind: 'User' | 'Group', id: string) =>
  new ScimError(404, `${kind} ${JSON.stringify(id.slice(0, 100))} not found`);

/** A SCIM answer: its JSON in SCIM's media type. */
export function scimJson(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': SCIM_MEDIA_TYPE, ...headers } });
}

function scimErrorBody(status: number, detail: string, scimType?: ScimType) {
  return { schemas: [SCIM_ERROR_SCHEMA], status: String(status), ...(scimType ? { scimType } : {}), detail };
}

/** Anything a SCIM route threw -> RFC 7644's error body. */
export function renderScimError(error: unknown, request: Request): Response {
  if (error instanceof ScimError) return scimJson(scimErrorBody(error.status, error.detail, error.scimType), error.status);
  if (error instanceof ApiError) {
    const detail = error.details[0]?.message ?? error.message;
    return scimJson(scimErrorBody(error.status, detail, error.status === 400 ? 'invalidSyntax' : undefined), error.status);
  }
  log.error('unhandled SCIM error', { method: request.method, path: redactPath(new URL(request.url).pathname), error });
  return scimJson(scimErrorBody(500, 'Unexpected error occurred. The error has been logged; please try again later.'), 500);
}
