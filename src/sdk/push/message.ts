/**
 * What the change feed carries: a committed change, as its announcer knows it. Receivers treat
 * it as a hint to read D1 again (never as data): the revision says how new the data is, the rest
 * says what changed, for listeners that refresh only what is concerned (Edge mode's scopes).
 */
/**
 * The name of the change feed's one object (`idFromName`). Here, not in change-feed.ts, so that
 * its announcers and listeners do not import `cloudflare:workers` (Node reads the route table).
 */
export const CHANGE_FEED_NAME = 'changes';

export interface ChangeAnnouncement {
  /** The data revision the change produced; 0 when the announcer has none (Edge mode). */
  revision: number;
  /** The environments whose flags changed; absent when any may have (a segment, an import). */
  environments?: string[];
  /** The flags that changed, when known and few. */
  features?: string[];
  /** A free-form name of what was refreshed, for announcers other than the service (Edge mode). */
  scope?: string;
}

const MAX_NAMES = 100;
const MAX_NAME_LENGTH = 255;

function names(value: unknown): string[] | undefined | null {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length > MAX_NAMES) return null;
  return value.every((name) => typeof name === 'string' && name.length <= MAX_NAME_LENGTH) ? (value as string[]) : null;
}

/** The announcement in `value` with only its known fields, or null when it is not one. */
export function parseAnnouncement(value: unknown): ChangeAnnouncement | null {
  if (typeof value !== 'object' || value === null) return null;
  const { revision, environments, features, scope } = value as Record<string, unknown>;
  if (typeof revision !== 'number' || !Number.isSafeInteger(revision) || revision < 0) return null;
  const environmentNames = names(environments);
  const featureNames = names(features);
  if (environmentNames === null || featureNames === null) return null;
  if (scope !== undefined && (typeof scope !== 'string' || scope.length > MAX_NAME_LENGTH)) return null;
  return {
    revision,
    ...(environmentNames ? { environments: environmentNames } : {}),
    ...(featureNames ? { features: featureNames } : {}),
    ...(scope !== undefined ? { scope } : {}),
  };
}
