/**
 * Outdated SDKs: the oldest version of each official SDK Unleash 6.10.1 still considers
 * current. An instance reports `<sdk name>:<version>`; a version below the floor of a known
 * SDK is outdated, anything else (unknown SDK, no version, not a semantic version) is not.
 */
import { compareSemver, parseSemver } from '../../sdk/evaluation/semver';

const MINIMUM_VERSIONS: Readonly<Record<string, string>> = {
  'unleash-client-node': '5.3.2',
  'unleash-client-java': '9.2.0',
  'unleash-client-go': '4.1.0',
  'unleash-client-python': '5.11.0',
  'unleash-client-ruby': '5.0.0',
  'unleash-client-dotnet': '4.1.3',
  'unleash-client-php': '2.3.0',
};

export function isOutdatedSdk(sdkVersion: string | null | undefined): boolean {
  if (!sdkVersion) return false;
  const [name, version] = sdkVersion.split(':');
  const floor = Object.hasOwn(MINIMUM_VERSIONS, name!) ? parseSemver(MINIMUM_VERSIONS[name!]!) : undefined;
  const reported = version === undefined ? undefined : parseSemver(version.replace(/^[v=]+/, ''));
  return floor !== undefined && reported !== undefined && compareSemver(reported, floor) < 0;
}

/** Reported SDK versions grouped with the applications using them, only the outdated ones. */
export function outdatedSdks(rows: readonly { sdkVersion: string | null; appName: string }[]) {
  const byVersion = new Map<string, string[]>();
  for (const row of rows) {
    if (!isOutdatedSdk(row.sdkVersion)) continue;
    const apps = byVersion.get(row.sdkVersion!) ?? [];
    if (!apps.includes(row.appName)) apps.push(row.appName);
    byVersion.set(row.sdkVersion!, apps);
  }
  return [...byVersion].map(([sdkVersion, applications]) => ({ sdkVersion, applications: applications.sort() }));
}
