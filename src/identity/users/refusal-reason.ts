/**
 * Why a password sign-in was refused, in the words the login history shows. Only the history
 * reads it: the person signing in is answered the same whatever the reason.
 */
export function refusalReason(candidate: { passwordHash: string | null } | undefined | null, permitted: boolean, allowed: boolean): string {
  if (!candidate) return 'No user found';
  if (!candidate.passwordHash) return 'The user has no password';
  if (!permitted) return 'Password sign-in is switched off';
  if (!allowed) return 'Too many failed sign-ins; sign-in is paused';
  return 'Wrong password';
}
