/** A person with a root role, signed in through the real login route, as a personal access token. */
import { createPersonalToken, createUser, loginAs } from './auth';

/**
 * Creates a user with `rootRole`, runs `beforeSignIn` with their id (to grant project roles),
 * signs in and returns a personal access token to send as `Authorization`.
 */
export async function signInAs(rootRole: number | string, beforeSignIn?: (userId: number) => Promise<void>): Promise<string> {
  const user = await createUser(rootRole);
  if (beforeSignIn) await beforeSignIn(user.id);
  const cookie = await loginAs(user.username, user.password);
  return createPersonalToken(cookie);
}
