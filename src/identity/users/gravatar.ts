import { sha256Hex } from '../../lib/encoding';

/** Unleash's generated avatar URL for a seed (an email or a name), hashed as given: callers normalise it as Unleash does there. */
export async function gravatarUrl(seed: string): Promise<string> {
  return `https://gravatar.com/avatar/${await sha256Hex(seed)}?s=42&d=retro&r=g`;
}
