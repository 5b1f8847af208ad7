/**
 * Single sign-on settings and provisioning: who a verified identity (a Cloudflare Access JWT or
 * an OpenID Connect ID token) is here. First sign-in creates the person from the verified email
 * (and name) with the configured root role; a person with that email is linked, never made twice.
 */
import type { Db } from '../../db/client';
import type { Actor } from '../../db/events';
import type { Env } from '../../env';
import { ApiError, badRequest, noAccess } from '../../http/errors';
import { SYSTEM_USER_ID } from '../../auth/principal';
import { VIEWER_ROLE_ID } from '../../auth/roles';
import { createUser, findUserByEmail, recordSignIn } from '../users/service';
import { syncSsoMemberships } from '../../db/groups';
import { ID_TOKEN_ALGORITHMS, type OidcSettings, type OidcSettingsInput, type SimpleSettings } from './schema';
import * as store from './store';
import { findRootRole } from '../../db/lookups';

/** Who creates people on their first sign-in, in audit events (as public sign-up does). */
const PROVISIONING_ACTOR: Actor = { actorName: 'unleash_system_user', userId: SYSTEM_USER_ID };
/** The bootstrap admin (`admin`, id 1): may always sign in with a password, as the break-glass account. */
export const BREAK_GLASS_USER_ID = 1;
const SETTINGS_TTL_MS = 10_000;

const DEFAULT_OIDC: OidcSettings = {
  enabled: false,
  discoverUrl: '',
  clientId: '',
  secret: '',
  autoCreate: false,
  defaultRootRole: null,
  defaultRootRoleId: null,
  emailDomains: '',
  enableSingleSignOut: false,
  enableGroupSyncing: false,
  groupJsonPath: '',
  addGroupsScope: false,
  acrValues: '',
  idTokenSigningAlgorithm: 'RS256',
  rootRoleMapping: [],
};

export interface SignInSettings {
  /** Undefined until an admin saves OIDC settings. */
  oidc: OidcSettings | undefined;
  passwordDisabled: boolean;
}

let cached: { settings: SignInSettings; until: number } | undefined;

/** Forgets this isolate's copy of the sign-in settings (after a change); others follow within 10 s. */
function forgetSignInSettings(): void {
  cached = undefined;
}

function storedOidc(content: Record<string, unknown> | undefined): OidcSettings | undefined {
  if (content === undefined) return undefined;
  const merged = { ...DEFAULT_OIDC };
  for (const key of Object.keys(DEFAULT_OIDC) as (keyof OidcSettings)[]) {
    if (Object.hasOwn(content, key) && content[key] !== undefined) (merged as Record<string, unknown>)[key] = content[key];
  }
  return merged;
}

/** The OIDC settings and the password switch, cached in the isolate for 10 s. */
export async function signInSettings(db: Db): Promise<SignInSettings> {
  if (cached && cached.until > Date.now()) return cached.settings;
  const [oidc, simple] = await Promise.all([
    store.readSetting(db, store.OIDC_SETTINGS_KEY),
    store.readSetting(db, store.SIMPLE_SETTINGS_KEY),
  ]);
  const settings = { oidc: storedOidc(oidc), passwordDisabled: simple?.disabled === true };
  cached = { settings, until: Date.now() + SETTINGS_TTL_MS };
  return settings;
}

/** Whether Cloudflare Access is configured (both variables set). */
function accessConfigured(env: Pick<Env, 'ACCESS_TEAM_DOMAIN' | 'ACCESS_AUD'>): boolean {
  return Boolean(env.ACCESS_TEAM_DOMAIN?.trim() && env.ACCESS_AUD?.trim());
}

/** Whether OpenID Connect sign-in is on and complete enough to start. */
export function oidcUsable(oidc: OidcSettings | undefined): oidc is OidcSettings {
  return oidc !== undefined && oidc.enabled && oidc.discoverUrl !== '' && oidc.clientId !== '';
}

// ---------------------------------------------------------------------------------------
// Settings routes

/** The stored secret as GET shows it: never whole, the last 4 characters of a long one. */
function maskSecret(secret: string): string {
  if (secret === '') return '';
  return secret.length >= 16 ? `********${secret.slice(-4)}` : '********';
}

function shownOidc(env: Env, oidc: OidcSettings) {
  const fromEnv = Boolean(env.OIDC_CLIENT_SECRET);
  return { ...oidc, secret: maskSecret(oidc.secret), ...(fromEnv ? { secretFromEnvironment: true } : {}) };
}

export async function getOidcSettings(env: Env, db: Db) {
  const oidc = storedOidc(await store.readSetting(db, store.OIDC_SETTINGS_KEY));
  return oidc === undefined ? {} : shownOidc(env, oidc);
}

/** `https:`, or `http:` on loopback only (local development and tests). */
export function allowedProviderUrl(text: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.username || url.password) return undefined;
  if (url.protocol === 'https:') return url;
  const loopback = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
  return url.protocol === 'http:' && loopback ? url : undefined;
}

/** `"@example.com, other.org"` -> `['example.com', 'other.org']`. */
function emailDomainList(text: string): string[] {
  return text
    .split(/[\s,;]+/)
    .map((domain) => domain.trim().toLowerCase().replace(/^@/, ''))
    .filter((domain) => domain !== '');
}

async function requireRootRole(db: Db, ref: number | string, path: string): Promise<{ id: number; name: string }> {
  const role = await findRootRole(db, ref);
  if (!role) throw badRequest(`Could not find root role ${JSON.stringify(ref)}`, { path });
  return role;
}

export async function setOidcSettings(env: Env, db: Db, actor: Actor, input: OidcSettingsInput) {
  const previousContent = await store.readSetting(db, store.OIDC_SETTINGS_KEY);
  const previous = storedOidc(previousContent);
  const secretKept = input.secret === undefined || (previous !== undefined && input.secret === maskSecret(previous.secret));
  const next: OidcSettings = {
    enabled: input.enabled ?? false,
    discoverUrl: input.discoverUrl?.trim() ?? '',
    clientId: input.clientId?.trim() ?? '',
    secret: secretKept ? (previous?.secret ?? '') : input.secret!.trim(),
    autoCreate: input.autoCreate ?? false,
    defaultRootRole: input.defaultRootRole ?? null,
    defaultRootRoleId: input.defaultRootRoleId ?? null,
    emailDomains: input.emailDomains?.trim() ?? '',
    enableSingleSignOut: input.enableSingleSignOut ?? false,
    enableGroupSyncing: input.enableGroupSyncing ?? false,
    groupJsonPath: input.groupJsonPath?.trim() ?? '',
    addGroupsScope: input.addGroupsScope ?? false,
    acrValues: input.acrValues?.trim() ?? '',
    idTokenSigningAlgorithm: input.idTokenSigningAlgorithm ?? ID_TOKEN_ALGORITHMS[0],
    rootRoleMapping: input.rootRoleMapping ?? [],
  };
  if (next.discoverUrl !== '' && !allowedProviderUrl(next.discoverUrl)) {
    throw badRequest('discoverUrl must be an https:// URL (http:// only on localhost)', { path: '/body/discoverUrl' });
  }
  if (next.enabled && next.discoverUrl === '')
    throw badRequest('discoverUrl is required to enable OpenID Connect', { path: '/body/discoverUrl' });
  if (next.enabled && next.clientId === '') throw badRequest('clientId is required to enable OpenID Connect', { path: '/body/clientId' });
  if (next.defaultRootRoleId !== null) {
    const role = await requireRootRole(db, next.defaultRootRoleId, '/body/defaultRootRoleId');
    next.defaultRootRole = role.name;
  } else if (next.defaultRootRole !== null && next.defaultRootRole !== '') {
    next.defaultRootRoleId = (await requireRootRole(db, next.defaultRootRole, '/body/defaultRootRole')).id;
  } else {
    next.defaultRootRole = null;
  }
  for (const [index, entry] of next.rootRoleMapping.entries()) {
    await requireRootRole(db, entry.rootRole, `/body/rootRoleMapping/${index}/rootRole`);
  }
  const data = { id: store.OIDC_SETTINGS_KEY, ...next, secret: maskSecret(next.secret) };
  await store.writeSetting(
    db,
    actor,
    store.OIDC_SETTINGS_KEY,
    next,
    previous === undefined
      ? { type: 'setting-created', data }
      : { type: 'setting-updated', data, preData: { id: store.OIDC_SETTINGS_KEY, ...previous, secret: maskSecret(previous.secret) } },
  );
  forgetSignInSettings();
  return shownOidc(env, next);
}

export async function getSimpleSettings(db: Db): Promise<SimpleSettings> {
  return { disabled: (await store.readSetting(db, store.SIMPLE_SETTINGS_KEY))?.disabled === true };
}

export async function setSimpleSettings(env: Env, db: Db, actor: Actor, input: SimpleSettings): Promise<SimpleSettings> {
  if (input.disabled) {
    const oidc = storedOidc(await store.readSetting(db, store.OIDC_SETTINGS_KEY));
    if (!oidcUsable(oidc) && !accessConfigured(env)) {
      throw badRequest(
        'Password sign-in can be switched off only while single sign-on is on (OpenID Connect enabled, or Cloudflare Access configured)',
        { path: '/body/disabled' },
      );
    }
  }
  const previous = await store.readSetting(db, store.SIMPLE_SETTINGS_KEY);
  const data = { id: store.SIMPLE_SETTINGS_KEY, disabled: input.disabled };
  await store.writeSetting(
    db,
    actor,
    store.SIMPLE_SETTINGS_KEY,
    { disabled: input.disabled },
    previous === undefined
      ? { type: 'setting-created', data }
      : { type: 'setting-updated', data, preData: { id: store.SIMPLE_SETTINGS_KEY, ...previous } },
  );
  forgetSignInSettings();
  return { disabled: input.disabled };
}

/** What the UI's login page is told (the 401 answer's `options`, `defaultHidden`). */
export async function loginHints(db: Db): Promise<{ defaultHidden: boolean; options: { type: string; message: string; path: string }[] }> {
  const settings = await signInSettings(db);
  const options = oidcUsable(settings.oidc) ? [{ type: 'oidc', message: 'Sign in with OpenID Connect', path: '/auth/oidc/login' }] : [];
  return { defaultHidden: settings.passwordDisabled && options.length > 0, options };
}

// ---------------------------------------------------------------------------------------
// Provisioning

/** A person as an identity provider vouches for them. */
export interface VerifiedIdentity {
  email: string;
  name?: string | undefined;
  /** The values of the group claim, for the root role mapping. */
  groups: readonly string[];
}

/** Signing in was refused for this identity (no account and no auto-create, a domain not allowed). */
export class SignInRefused extends Error {}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

/** The values at a dotted path of the claims (`groups`, `realm_access.roles`): strings only. */
export function claimValues(claims: Record<string, unknown>, path: string): string[] {
  if (path === '') return [];
  let value: unknown = claims;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, part)) return [];
    value = (value as Record<string, unknown>)[part];
  }
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** The group claim's path: Unleash's `groupJsonPath`, `groups` by default. */
export function groupPath(oidc: OidcSettings | undefined): string {
  return oidc?.enableGroupSyncing ? oidc.groupJsonPath || 'groups' : '';
}

/**
 * The person an identity signs in: the live user with that email (linked, never duplicated),
 * else a new one when the settings allow (auto-create on; the email's domain on the allow
 * list when there is one), with the root role the group claim maps to or the default. Without
 * saved OIDC settings (Cloudflare Access alone), new people are created as Viewers. With group
 * syncing on, the person's group memberships then follow the group claim (src/db/groups.ts).
 */
export async function provisionUser(db: Db, identity: VerifiedIdentity): Promise<number> {
  const email = identity.email.trim().toLowerCase();
  if (!EMAIL.test(email)) throw new SignInRefused('the identity provider gave no usable email address');
  const { oidc } = await signInSettings(db);
  const id = await findOrCreateUser(db, email, identity, oidc);
  // Unleash syncs groups on every sign-in while group syncing is on (an empty claim leaves every synced group).
  if (oidc?.enableGroupSyncing) await syncSsoMemberships(db, id, identity.groups);
  return id;
}

async function findOrCreateUser(db: Db, email: string, identity: VerifiedIdentity, oidc: OidcSettings | undefined): Promise<number> {
  const existing = await findUserByEmail(db, email);
  if (existing) {
    await recordSignIn(db, existing.id);
    return existing.id;
  }
  const autoCreate = oidc === undefined ? true : oidc.autoCreate;
  if (!autoCreate) throw new SignInRefused(`there is no account for ${email}, and new accounts are not created on sign-in`);
  const domains = emailDomainList(oidc?.emailDomains ?? '');
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (domains.length > 0 && !domains.includes(domain))
    throw new SignInRefused(`accounts for ${domain} addresses are not created on sign-in`);
  const mapped = oidc?.enableGroupSyncing ? oidc.rootRoleMapping.find((entry) => identity.groups.includes(entry.group)) : undefined;
  const rootRole = mapped?.rootRole ?? oidc?.defaultRootRoleId ?? oidc?.defaultRootRole ?? VIEWER_ROLE_ID;
  const name = identity.name?.trim().slice(0, 255) || undefined;
  try {
    const created = await createUser(db, PROVISIONING_ACTOR, { email, name, rootRole });
    await recordSignIn(db, created.id);
    return created.id;
  } catch (error) {
    // A parallel first sign-in of the same person created them first: link to that one.
    const raced = error instanceof ApiError && error.status === 400 ? await findUserByEmail(db, email) : undefined;
    if (!raced) throw error;
    await recordSignIn(db, raced.id);
    return raced.id;
  }
}

/** 403 for a verified identity that may not sign in here. */
export function refusedAnswer(reason: SignInRefused): ApiError {
  return noAccess(`Single sign-on refused: ${reason.message}.`);
}
