/** SCIM in tests: enable provisioning with a fresh token, and call /scim/v2 as an identity provider does. */
import { expect } from 'vitest';
import { bodyOf, call, type CallOptions } from './http';

export const SCIM_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const SCIM_USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const SCIM_GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const LIST_RESPONSE = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

/** Turns SCIM on (admin key) and returns a newly generated token. */
export async function enableScim(options: { assumeControlOfExisting?: boolean } = {}): Promise<string> {
  const saved = await call('POST', '/api/admin/scim-settings', { body: { enabled: true, ...options } });
  expect(saved.status).toBe(200);
  const generated = await call('POST', '/api/admin/scim-settings/generate-new-token');
  expect(generated.status).toBe(200);
  return (await bodyOf<{ token: string }>(generated)).token;
}

/** A SCIM request with the token as `Bearer`, bodies as `application/scim+json`. */
export function scim(token: string | null, method: string, path: string, body?: unknown, options: CallOptions = {}): Promise<Response> {
  return call(method, `/scim/v2${path}`, {
    token: token === null ? null : `Bearer ${token}`,
    ...(body !== undefined ? { body, contentType: 'application/scim+json' } : {}),
    ...options,
  });
}

/** Asserts RFC 7644's error body and media type, and returns it. */
export async function expectScimError(response: Response, status: number, scimType?: string) {
  expect(response.headers.get('content-type')).toBe('application/scim+json');
  const body = await bodyOf<{ schemas: string[]; status: string; scimType?: string; detail: string }>(response);
  expect({ httpStatus: response.status, status: body.status, schemas: body.schemas, scimType: body.scimType }).toEqual({
    httpStatus: status,
    status: String(status),
    schemas: [SCIM_ERROR],
    scimType,
  });
  expect(typeof body.detail).toBe('string');
  return body;
}

/** A SCIM User body as Okta sends it on provisioning. */
export function oktaUser(userName: string, extra: Record<string, unknown> = {}) {
  return {
    schemas: [SCIM_USER],
    userName,
    name: { givenName: 'Ada', familyName: 'Lovelace' },
    emails: [{ primary: true, value: userName, type: 'work' }],
    displayName: 'Ada Lovelace',
    active: true,
    ...extra,
  };
}
