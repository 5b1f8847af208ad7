/**
 * People in tests: create a user through the API, sign in for a session cookie, mint a
 * personal access token. Everything goes through the Worker's real routes.
 */
import { BASE, bodyOf, call, type CallOptions } from './http';
import { unique } from './names';

/** Strong enough for Unleash's rule (upper, lower, digit, symbol, 10+ characters). */
export const STRONG_PASSWORD = 'Correct-Horse-42';

export interface TestUser {
  id: number;
  username: string;
  password: string;
}

/** Creates a user from exactly this body (201 expected) and returns the created user's body. */
export async function postUser(body: Record<string, unknown>): Promise<any> {
  const response = await call('POST', '/api/admin/user-admin', { body });
  if (response.status !== 201) throw new Error(`user creation failed: ${response.status} ${await response.text()}`);
  return bodyOf(response);
}

/** Creates a user with a password (root role Admin=1, Editor=2, Viewer=3 or a role name). */
export async function createUser(
  rootRole: number | string = 3,
  options: { username?: string; email?: string; password?: string } = {},
): Promise<TestUser> {
  const username = options.username ?? unique('person');
  const password = options.password ?? STRONG_PASSWORD;
  const { id } = await postUser({ username, ...(options.email ? { email: options.email } : {}), password, rootRole });
  return { id, username, password };
}

/** Signs in and returns the `cookie` header value to send (`unleash-session=<id>`). */
export async function loginAs(username: string, password: string = STRONG_PASSWORD): Promise<string> {
  const response = await call('POST', '/auth/simple/login', { token: null, body: { username, password } });
  if (response.status !== 200) throw new Error(`login failed: ${response.status} ${await response.text()}`);
  const setCookie = response.headers.get('set-cookie') ?? '';
  const match = /^unleash-session=([0-9a-f]{64});/.exec(setCookie);
  if (!match) throw new Error(`no session cookie in ${setCookie}`);
  return `unleash-session=${match[1]}`;
}

/** A user with the given root role, signed in: its id and session cookie. */
export async function signedInUser(rootRole: number | string = 3): Promise<TestUser & { cookie: string }> {
  const user = await createUser(rootRole);
  return { ...user, cookie: await loginAs(user.username, user.password) };
}

/**
 * Call options that send a session cookie instead of an API key, as a browser on one of the
 * service's own pages does: with its `Origin` (writes need it; `options.headers` may change it).
 */
export function withSession(cookie: string, options: CallOptions = {}): CallOptions {
  return { ...options, token: null, headers: { origin: BASE, ...options.headers, cookie } };
}

/** Creates a personal access token for the signed-in user and returns its secret. */
export async function createPersonalToken(
  cookie: string,
  description = unique('pat'),
  expiresAt = '2099-01-01T00:00:00.000Z',
): Promise<string> {
  const response = await call('POST', '/api/admin/user/tokens', withSession(cookie, { body: { description, expiresAt } }));
  if (response.status !== 201) throw new Error(`PAT creation failed: ${response.status} ${await response.text()}`);
  return (await bodyOf<{ secret: string }>(response)).secret;
}
