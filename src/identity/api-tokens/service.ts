import type { Env } from '../../env';
import { runBatch, type Db } from '../../db/client';
import { auditEvent } from '../../db/events';
import { badRequest, conflict, notFound, validationError, type ErrorDetail } from '../../http/errors';
import {
  ADMIN,
  CREATE_CLIENT_API_TOKEN,
  CREATE_FRONTEND_API_TOKEN,
  DELETE_CLIENT_API_TOKEN,
  DELETE_FRONTEND_API_TOKEN,
  hasPermission,
  READ_CLIENT_API_TOKEN,
  READ_FRONTEND_API_TOKEN,
  requirePermissionFor,
  UPDATE_CLIENT_API_TOKEN,
  UPDATE_FRONTEND_API_TOKEN,
  type Permission,
} from '../../auth/permissions';
import { reportedTokenType, type ApiTokenType, type Principal } from '../../auth/principal';
import { formatApiTokenSecret, secretPrefix, V2_SELECTOR, v2Selector } from '../../auth/secrets';
import { fromBase64, sha256Hex, toHex } from '../../lib/encoding';
import { revokeCached, syncFromD1 } from '../../auth/token-records';
import { log } from '../../log';
import type { CreateApiTokenRequest, ImportApiTokenRequest } from './schema';
import * as store from './store';
import { environmentExists } from '../../db/lookups';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The permission each token type needs for an action: ADMIN for admin tokens; backend tokens count as client tokens. */
function byTokenType(client: Permission, frontend: Permission): Record<ApiTokenType, Permission> {
  return { admin: ADMIN, client, backend: client, frontend };
}

const CREATE = byTokenType(CREATE_CLIENT_API_TOKEN, CREATE_FRONTEND_API_TOKEN);
const READ = byTokenType(READ_CLIENT_API_TOKEN, READ_FRONTEND_API_TOKEN);
const UPDATE = byTokenType(UPDATE_CLIENT_API_TOKEN, UPDATE_FRONTEND_API_TOKEN);
const DELETE = byTokenType(DELETE_CLIENT_API_TOKEN, DELETE_FRONTEND_API_TOKEN);

export interface NewApiToken {
  type: ApiTokenType;
  tokenName: string;
  environment: string;
  projects: string[];
  expiresAt: string | null;
}

/** Applies the seed's rules between fields and its defaults; reports every problem at once. */
function resolveCreateRequest(body: CreateApiTokenRequest): NewApiToken {
  const details: ErrorDetail[] = [];
  if (body.tokenName !== undefined && body.username !== undefined) {
    details.push({
      path: '/body/username',
      message: '"tokenName" and "username" are mutually exclusive: send "tokenName" ("username" is its deprecated alias).',
    });
  }
  const tokenName = body.tokenName ?? body.username;
  if (tokenName === undefined) {
    details.push({
      path: '/body/tokenName',
      message: 'The `/body/tokenName` property is required. It was not present on the data you sent.',
    });
  }
  if (body.project !== undefined && body.projects !== undefined) {
    details.push({ path: '/body/projects', message: '"project" must not exist simultaneously with [projects].' });
  }
  if (body.projects?.length === 0) {
    details.push({ path: '/body/projects', message: '"projects" must contain at least 1 items. You provided [].' });
  }

  const requested = body.projects ?? [body.project ?? '*'];
  const projects = requested.includes('*') ? ['*'] : [...new Set(requested)];
  const environment = body.environment ?? (body.type === 'admin' ? '*' : 'default');

  if (body.type === 'admin') {
    if (environment !== '*') details.push({ path: '/body/environment', message: 'Admin token cannot be scoped to single environment' });
    if (projects.length !== 1 || projects[0] !== '*') {
      details.push({ path: '/body/projects', message: 'Admin token cannot be scoped to single project' });
    }
  } else if (environment === '*') {
    const label = body.type === 'frontend' ? 'Frontend' : 'Client';
    details.push({ path: '/body/environment', message: `${label} token cannot be scoped to all environments` });
  }

  if (details.length > 0) throw validationError(details);
  return { type: body.type, tokenName: tokenName!, environment, projects, expiresAt: body.expiresAt ?? null };
}

interface TokenView {
  tokenName: string;
  type: string;
  environment: string;
  projects: string[];
  expiresAt: string | null;
  createdAt: string;
  seenAt: string | null;
  alias: string | null;
}

/** The API token as the seed describes it, in its key order. */
function tokenBody(secret: string, token: TokenView) {
  return {
    secret,
    tokenName: token.tokenName,
    username: token.tokenName,
    type: token.type,
    environment: token.environment,
    project: token.projects.join(','),
    projects: token.projects,
    expiresAt: token.expiresAt,
    createdAt: token.createdAt,
    seenAt: token.seenAt,
    alias: token.alias,
  };
}

/** The created token: the only time its secret is shown. */
function createdTokenBody(secret: string, token: NewApiToken, createdAt: string) {
  return tokenBody(secret, { ...token, createdAt, seenAt: null, alias: null });
}

/**
 * What a listing shows in `secret`: never the secret, but a recognisable prefix followed by
 * the token's id, `<scope>:<env>.<6 hex>***<id>`. Unleash's UI deletes (and scripts address) a
 * listed token by this field, so it must name exactly one token: the id makes it unique, and
 * every route that takes a token accepts it.
 */
const HANDLE_SEPARATOR = '***';

function listedSecret(token: Pick<store.StoredApiToken, 'secretPrefix' | 'id'>): string {
  return `${token.secretPrefix}${HANDLE_SEPARATOR}${token.id}`;
}

/** A listed token: never the secret, only its handle. */
function listedTokenBody(token: store.StoredApiToken) {
  const type = reportedTokenType(token.type as ApiTokenType);
  return { id: token.id, ...tokenBody(listedSecret(token), { ...token, type }) };
}

/**
 * After creation or an expiry change KV is a cache of D1: a failed KV write is logged, and
 * lookups fall back to D1 (a write can only ever copy what D1 holds, see token-records).
 */
async function syncKv(env: Env, secretHash: string, tokenId: string): Promise<void> {
  try {
    await syncFromD1(env, 'apikey', secretHash);
  } catch (error) {
    log.warn('KV write for API token failed; D1 fallback will serve it', { tokenId, error });
  }
}

/** A token's projects as Unleash names them on its events and in `project`: joined by commas. */
function eventProject(projects: readonly string[]): string {
  return projects.join(',') || '*';
}

export async function createToken(env: Env, db: Db, principal: Principal, body: CreateApiTokenRequest) {
  const token = resolveCreateRequest(body);
  requirePermissionFor(principal, CREATE[token.type]);
  return insertToken(env, db, principal, token);
}

/**
 * `POST /api/admin/projects/:projectId/api-tokens`: a client or frontend token for that one
 * project. The route checked CREATE_PROJECT_API_TOKEN in the project, which stands in for
 * the per-type root permissions here, as in Unleash.
 */
export async function createProjectToken(env: Env, db: Db, principal: Principal, projectId: string, body: CreateApiTokenRequest) {
  if ((await store.missingProjects(db, [projectId])).length > 0) throw notFound(`Could not find project with id ${projectId}`);
  const scoped = (body.projects ?? [body.project ?? projectId]).every((project) => project === projectId);
  if (!scoped) throw badRequest('Project level tokens can only be created for one project');
  const token = resolveCreateRequest({ ...body, project: undefined, projects: [projectId] });
  return insertToken(env, db, principal, token);
}

/** The tokens of one project (scoped to it alone or among others), never admin tokens. */
export async function listProjectTokens(db: Db, projectId: string) {
  if ((await store.missingProjects(db, [projectId])).length > 0) throw notFound('No project found');
  const tokens = await store.listTokens(db);
  return tokens.filter((token) => token.type !== 'admin' && token.projects.includes(projectId)).map(listedTokenBody);
}

/**
 * `DELETE /api/admin/projects/:projectId/api-tokens/:token`: 404 for a token this project
 * cannot see, 400 for one that is not scoped to this project alone (Unleash's answers).
 */
export async function revokeProjectToken(env: Env, db: Db, principal: Principal, projectId: string, ref: string): Promise<void> {
  const token = await findByRef(db, ref);
  if (!token || token.type === 'admin' || !token.projects.includes(projectId)) throw notFound('Could not find api token.');
  if (token.projects.length !== 1) throw badRequest('Project level tokens can only be deleted when scoped to this project alone');
  await deleteStored(env, db, principal, token);
}

/**
 * `POST /api/admin/api-tokens/import`: a token whose secret the caller chose, so that SDKs
 * moved from another Unleash keep theirs. Only an admin gets here (the route's rule). The
 * secret's shape is checked in the schema; here, that a `<scope>:<env>.` prefix agrees with
 * the token (SDKs and Edge read it) and that no token has it yet.
 */
export async function importToken(env: Env, db: Db, principal: Principal, body: ImportApiTokenRequest) {
  const { secret, selector: givenSelector, verifier, ...request } = body;
  const token = resolveCreateRequest(request);
  const bySecret = secret !== undefined && givenSelector === undefined && verifier === undefined;
  const byVerifier = secret === undefined && givenSelector !== undefined && verifier !== undefined;
  if (!bySecret && !byVerifier) {
    throw validationError([{ path: '/body/secret', message: 'give either secret, or selector and verifier (an Unleash 8.1+ v2 token)' }]);
  }
  const given = secret !== undefined ? await secretGiven(secret, token) : v2Given(givenSelector!, verifier!, token);
  if (await store.findToken(db, '', given.hash)) throw conflict('An API token with this secret already exists');
  // A v2 token is addressed by its selector (as in Unleash 8), so no two may share one.
  if (given.selector !== null && (await store.findTokenBySelector(db, given.selector))) {
    throw conflict('An API token with this selector already exists');
  }
  return insertToken(env, db, principal, token, given);
}

interface GivenKey {
  /** Hex SHA-256 of the whole secret: what the key check looks up. */
  hash: string;
  /** What listings show, and what the creation answers in `secret` when the secret is not known. */
  prefix: string;
  secret: string;
  selector: string | null;
}

async function secretGiven(secret: string, token: NewApiToken): Promise<GivenKey> {
  const problem = secretScopeProblem(secret, token);
  if (problem) throw validationError([{ path: '/body/secret', message: problem }]);
  return { hash: await sha256Hex(secret), prefix: secretPrefix(secret), secret, selector: v2Selector(secret) };
}

/**
 * A v2 token known by its selector and verifier only: Unleash's verifier is the base64url of the
 * SHA-256 our key check computes in hex, so the same key is accepted here unchanged.
 */
function v2Given(selector: string, verifier: string, token: NewApiToken): GivenKey {
  const bytes = fromBase64(verifier.replace(/-/g, '+').replace(/_/g, '/') + '=');
  const scope = token.projects.length === 1 ? token.projects[0]! : '[]';
  const prefix = `${scope}:${token.environment}.v2_${selector}`;
  return { hash: toHex(bytes), prefix, secret: prefix, selector };
}

/** Why a given secret's `<scope>:<environment>.` prefix does not describe this token, if it does not. */
function secretScopeProblem(secret: string, token: NewApiToken): string | undefined {
  const shaped = /^([^:]+):([^.]+)\./.exec(secret);
  if (!shaped) return undefined; // A legacy secret without a prefix: Unleash still accepts those.
  const expectedScope = token.projects.length === 1 ? token.projects[0]! : '[]';
  if (shaped[1] !== expectedScope || shaped[2] !== token.environment) {
    return `The secret's prefix "${shaped[1]}:${shaped[2]}" does not match the token's scope "${expectedScope}:${token.environment}"`;
  }
  return undefined;
}

async function insertToken(env: Env, db: Db, principal: Principal, token: NewApiToken, given?: GivenKey) {
  if (token.environment !== '*' && !(await environmentExists(db, token.environment))) {
    throw badRequest(`Environment=${token.environment} does not exist`);
  }
  const missing = await store.missingProjects(
    db,
    token.projects.filter((project) => project !== '*'),
  );
  if (missing.length > 0) throw badRequest(`Project=${missing[0]} does not exist`);

  const secret = given?.secret ?? formatApiTokenSecret(token.projects, token.environment);
  const secretHash = given?.hash ?? (await sha256Hex(secret));
  const id = crypto.randomUUID();
  const createdAt = new Date().toISOString();
  const row = {
    secretHash,
    id,
    secretPrefix: given?.prefix ?? secretPrefix(secret),
    tokenName: token.tokenName,
    type: token.type,
    environment: token.environment,
    expiresAt: token.expiresAt,
    createdAt,
    createdByUserId: principal.userId,
  };
  await runBatch(db, [
    ...store.insertTokenStatements(db, row, token.projects),
    auditEvent(db, principal, {
      type: 'api-token-created',
      project: eventProject(token.projects),
      environment: token.environment,
      // 6.10.1's payload: the stored token without its secret, in its key order.
      data: {
        tokenName: token.tokenName,
        environment: token.environment,
        projects: token.projects,
        type: token.type,
        ...(token.expiresAt !== null ? { expiresAt: token.expiresAt } : {}),
        username: token.tokenName,
        alias: null,
        project: eventProject(token.projects),
        createdAt,
      },
    }),
  ]);
  await syncKv(env, secretHash, id);
  return { id, body: createdTokenBody(secret, token, createdAt) };
}

export async function listTokens(db: Db, principal: Principal) {
  const tokens = await store.listTokens(db);
  return tokens.filter((token) => hasPermission(principal, READ[token.type as ApiTokenType])).map(listedTokenBody);
}

/**
 * `ref` is a token's public id, its listed handle (`…***<id>`), its full secret (Unleash
 * addresses tokens by secret) or, for a v2 token, its selector (as Unleash 8 does). A handle
 * must match its token's prefix too, so a mangled one finds nothing rather than some other token.
 */
async function findByRef(db: Db, ref: string) {
  const separator = ref.lastIndexOf(HANDLE_SEPARATOR);
  if (separator >= 0) {
    const token = await store.findToken(db, ref.slice(separator + HANDLE_SEPARATOR.length), '');
    return token && listedSecret(token) === ref ? token : undefined;
  }
  if (V2_SELECTOR.test(ref)) {
    const token = await store.findTokenBySelector(db, ref);
    if (token) return token;
  }
  return store.findToken(db, ref, await sha256Hex(ref));
}

/** A secret's shape (`<scope>:<environment>.<hex>`): such a ref names a key, never a token name. */
const SECRET_SHAPE = /^[^:]+:[^.]+\.[0-9a-f]+$/;

function secretShaped(ref: string): boolean {
  return SECRET_SHAPE.test(ref) || v2Selector(ref) !== null;
}

/**
 * `GET /api/admin/api-tokens/:ref`, as 6.10.1 answers it and as before, without ambiguity:
 * 1. tokens named `ref` exist (that the caller may read): `{ tokens: [...] }` (6.10.1, by name);
 * 2. else `ref` is a token's id, listed handle or secret: that one token (our earlier answer);
 * 3. else `ref` is shaped like an id, a handle or a secret: 404, as before;
 * 4. else `{ tokens: [] }`, 6.10.1's answer for a name no token has.
 * A name therefore always wins; the single-token answer is only given for a ref that names no token.
 */
export async function getTokensByNameOrRef(db: Db, principal: Principal, ref: string) {
  const readable = (token: store.StoredApiToken) => hasPermission(principal, READ[token.type as ApiTokenType]);
  const named = (await store.tokensNamed(db, ref)).filter(readable);
  if (named.length > 0) return { tokens: named.map(listedTokenBody) };
  const token = await findByRef(db, ref);
  if (token && readable(token)) return listedTokenBody(token);
  if (UUID.test(ref) || ref.includes(HANDLE_SEPARATOR) || secretShaped(ref)) throw notFound('Could not find api token.');
  return { tokens: [] };
}

export async function updateExpiry(env: Env, db: Db, principal: Principal, ref: string, expiresAt: string) {
  const token = await findByRef(db, ref);
  if (!token) throw notFound('Could not find api token.');
  requirePermissionFor(principal, UPDATE[token.type as ApiTokenType]);
  await db.batch([
    store.updateExpiryStatement(db, token.secretHash, expiresAt),
    auditEvent(db, principal, {
      type: 'api-token-updated',
      project: eventProject(token.projects),
      environment: token.environment,
      data: { id: token.id, tokenName: token.tokenName, expiresAt },
      preData: { id: token.id, tokenName: token.tokenName, expiresAt: token.expiresAt },
    }),
  ]);
  await syncKv(env, token.secretHash, token.id);
}

/**
 * Revokes a token: D1 first (the source of truth), then KV and this isolate's cache. A KV
 * delete that keeps failing is an error (500), not a warning: the caller must learn that the
 * key may still pass elsewhere until its KV entry expires (KV_TTL_SECONDS at most).
 */
export async function revokeToken(env: Env, db: Db, principal: Principal, ref: string): Promise<void> {
  const token = await findByRef(db, ref);
  if (!token) {
    // Given the full secret, a retry after a revoke whose KV delete failed (500) still empties
    // KV. Nothing matched: 200 with nothing written, as 6.10.1 answers, because a delete of
    // something already gone has done what was asked (Terraform's provider fails a destroy on
    // anything but 200 when a token was revoked by hand).
    if (!UUID.test(ref) && !ref.includes(HANDLE_SEPARATOR)) await revokeCached(env, 'apikey', await sha256Hex(ref));
    return;
  }
  requirePermissionFor(principal, DELETE[token.type as ApiTokenType]);
  await deleteStored(env, db, principal, token);
}

async function deleteStored(env: Env, db: Db, principal: Principal, token: store.StoredApiToken): Promise<void> {
  await db.batch([
    store.deleteTokenStatement(db, token.secretHash),
    auditEvent(db, principal, {
      type: 'api-token-deleted',
      project: eventProject(token.projects),
      environment: token.environment,
      preData: { id: token.id, tokenName: token.tokenName, type: token.type, environment: token.environment, projects: token.projects },
    }),
  ]);
  await revokeCached(env, 'apikey', token.secretHash);
}
