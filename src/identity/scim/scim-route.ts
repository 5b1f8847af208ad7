/** What every SCIM route shares: public access with the SCIM rate limit, SCIM's error answers, its base URL and body. */
import type * as v from 'valibot';
import type { Env } from '../../env';
import { DEFAULT_MAX_BODY_BYTES, readJsonBody } from '../../http/body';
import { publicBaseUrl } from '../../http/base-url';
import { open, type Answer } from '../../http/route';
import { renderScimError, SCIM_MEDIA_TYPE } from './errors';
import { ScimErrorSchema } from './schema';

const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid request: scimType invalidSyntax, invalidValue, invalidFilter, noTarget, invalidPath or mutability',
  401: 'No valid SCIM token (missing, wrong or revoked), or SCIM provisioning is disabled',
  404: 'No such resource',
  409: 'userName, email or displayName already taken (scimType uniqueness)',
  413: 'The body is too large',
  415: 'The body is not JSON (application/scim+json or application/json)',
  429: 'Too many requests (see retry-after)',
  500: 'An unexpected failure; the error is logged',
};

/** SCIM answers: the successes given, and SCIM error bodies for these statuses. */
export function scimAnswers(success: Record<number, { description: string; schema: v.GenericSchema | null }>, errors: readonly number[]) {
  const responses: Record<number, Answer> = {};
  for (const [status, answer] of Object.entries(success)) responses[Number(status)] = { ...answer, contentType: SCIM_MEDIA_TYPE };
  for (const status of [401, 429, 500, ...errors]) {
    responses[status] = { description: ERROR_TEXT[status] ?? 'Error', schema: ScimErrorSchema, contentType: SCIM_MEDIA_TYPE };
  }
  return responses;
}

/** The SCIM base URL of a request's prefix, for `meta.location`. */
export function scimBase(env: Env, request: Request, prefix: string): string {
  return `${publicBaseUrl(env, request)}${prefix}`;
}

export function readScimBody(request: Request): Promise<unknown> {
  return readJsonBody(request, DEFAULT_MAX_BODY_BYTES, [SCIM_MEDIA_TYPE, 'application/json']);
}

/** What every SCIM route shares: its tag, public access with the SCIM rate limit, SCIM errors. */
export const SCIM_ROUTE = { access: open('scim'), tag: 'SCIM', renderError: renderScimError } as const;
