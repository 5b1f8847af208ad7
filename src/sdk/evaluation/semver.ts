/**
 * Strict semantic versions (semver.org 2.0) for the SEMVER_* operators: parse and compare by
 * precedence. Small enough to own; it follows what the `semver` package accepts in strict
 * mode, minus its leading `v`/`=` allowance on context values (the Node SDK refuses `v`).
 */
export interface SemVer {
  major: number;
  minor: number;
  patch: number;
  prerelease: (string | number)[];
}

const MAX_LENGTH = 256;
const NUMERIC = '0|[1-9]\\d{0,15}';
const PRE_ID = `(?:${NUMERIC}|\\d*[a-zA-Z-][a-zA-Z0-9-]*)`;
const SEMVER = new RegExp(
  `^(${NUMERIC})\\.(${NUMERIC})\\.(${NUMERIC})(?:-(${PRE_ID}(?:\\.${PRE_ID})*))?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?$`,
);

export function parseSemver(input: string): SemVer | undefined {
  const text = input.trim();
  if (text.length > MAX_LENGTH) return undefined;
  const match = SEMVER.exec(text);
  if (!match) return undefined;
  const [, major, minor, patch, pre] = match;
  const numbers = [Number(major), Number(minor), Number(patch)];
  if (numbers.some((n) => !Number.isSafeInteger(n))) return undefined;
  return {
    major: numbers[0]!,
    minor: numbers[1]!,
    patch: numbers[2]!,
    prerelease: pre ? pre.split('.').map((id) => (/^\d+$/.test(id) ? Number(id) : id)) : [],
  };
}

function compareIdentifiers(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'number') return -1;
  if (typeof b === 'number') return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Negative, zero or positive as `a` is lower than, equal to or higher than `b`. */
export function compareSemver(a: SemVer, b: SemVer): number {
  const core = a.major - b.major || a.minor - b.minor || a.patch - b.patch;
  if (core !== 0) return core;
  // A version without pre-release identifiers ranks above any pre-release of it.
  if (a.prerelease.length === 0 || b.prerelease.length === 0) return b.prerelease.length - a.prerelease.length;
  const length = Math.max(a.prerelease.length, b.prerelease.length);
  for (let i = 0; i < length; i++) {
    const left = a.prerelease[i];
    const right = b.prerelease[i];
    if (left === undefined) return -1;
    if (right === undefined) return 1;
    const order = compareIdentifiers(left, right);
    if (order !== 0) return order;
  }
  return 0;
}
