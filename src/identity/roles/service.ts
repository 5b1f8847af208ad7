import { forgetAllUsers } from '../../auth/user-principal';
import { runBatch, type Db, type Statement } from '../../db/client';
import { auditEvent, type Actor } from '../../db/events';
import { ApiError, conflict, notFound, validationError, type ErrorDetail } from '../../http/errors';
import type { CustomRoleType, RoleDefinition } from './schema';
import * as store from './store';
import { isUniqueViolation } from '../../db/lookups';

const CUSTOM_TYPES: ReadonlySet<string> = new Set(['custom', 'root-custom']);

/** The seed's Role, as embedded in signup tokens and listed here. */
export function roleBody(role: Pick<store.RoleRow, 'id' | 'type' | 'name' | 'description'>) {
  return { id: role.id, type: role.type, name: role.name, description: role.description ?? '', project: null };
}

export interface ValidRole {
  name: string;
  description: string;
  type: CustomRoleType;
  /** `undefined` when the definition did not mention permissions (an update keeps them). */
  grants: store.GrantedPermission[] | undefined;
}

const KIND_OF: Record<string, string> = { root: 'a root', project: 'a project', environment: 'an environment' };

/**
 * Checks a role definition against the data: unique name (any role, of any type), permissions
 * that exist, fit the role's type, and name an existing environment when they are
 * environment permissions. Every problem is reported, each at its field; nothing is written.
 */
export async function validateDefinition(db: Db, body: RoleDefinition, exceptId?: number): Promise<ValidRole> {
  const type: CustomRoleType = body.type ?? 'custom';
  const details: ErrorDetail[] = [];
  const [nameTaken, permissionRows, environmentList] = await Promise.all([
    store.roleNameTaken(db, body.name, exceptId),
    body.permissions?.length ? store.allPermissions(db) : Promise.resolve([]),
    body.permissions?.length ? store.environmentNames(db) : Promise.resolve([]),
  ]);
  if (nameTaken) details.push({ path: '/body/name', message: `There already exists a role with the name ${body.name}` });

  const byName = new Map(permissionRows.map((row) => [row.permission, row]));
  const byId = new Map(permissionRows.map((row) => [row.id, row]));
  const knownEnvironments = new Set(environmentList);
  const grants = new Map<string, store.GrantedPermission>();

  body.permissions?.forEach((item, index) => {
    const at = `/body/permissions/${index}`;
    if (item.id === undefined && item.name === undefined) {
      details.push({ path: at, message: `The \`${at}\` item must name a permission by \`name\` or \`id\`.` });
      return;
    }
    if (item.name === undefined && type === 'root-custom') {
      details.push({
        path: `${at}/id`,
        message: 'Permissions given by `id` are only accepted for `custom` roles; name them with `name` in a `root-custom` role.',
      });
      return;
    }
    const named = item.name === undefined ? undefined : byName.get(item.name);
    const numbered = item.id === undefined ? undefined : byId.get(item.id);
    if (item.name !== undefined && !named) {
      details.push({ path: `${at}/name`, message: `The permission "${item.name}" does not exist.` });
    }
    if (item.id !== undefined && !numbered) {
      details.push({ path: `${at}/id`, message: `No permission has the id ${item.id}.` });
    }
    if (named && numbered && named.id !== numbered.id) {
      details.push({ path: at, message: `Permission id ${numbered.id} is "${numbered.permission}", not "${named.permission}".` });
      return;
    }
    const permission = named ?? numbered;
    if (!permission || (item.name !== undefined && !named) || (item.id !== undefined && !numbered)) return;

    const field = item.name !== undefined ? `${at}/name` : `${at}/id`;
    const fits = type === 'root-custom' ? permission.type === 'root' : permission.type !== 'root';
    if (!fits) {
      const needs =
        type === 'root-custom'
          ? 'a `root-custom` role takes only root permissions'
          : 'a `custom` (project) role takes only project and environment permissions';
      details.push({ path: field, message: `"${permission.permission}" is ${KIND_OF[permission.type] ?? 'a'} permission, but ${needs}.` });
      return;
    }
    const environment = item.environment ?? '';
    if (permission.type === 'environment') {
      if (environment === '') {
        details.push({
          path: `${at}/environment`,
          message: `"${permission.permission}" is an environment permission: name the environment it applies to.`,
        });
        return;
      }
      if (!knownEnvironments.has(environment)) {
        details.push({ path: `${at}/environment`, message: `The environment "${environment}" does not exist.` });
        return;
      }
    } else if (environment !== '') {
      details.push({
        path: `${at}/environment`,
        message: `"${permission.permission}" is not an environment permission: it takes no environment.`,
      });
      return;
    }
    grants.set(`${permission.permission}\u0000${environment}`, { permission: permission.permission, environment });
  });

  if (details.length > 0) throw validationError(details);
  return {
    name: body.name,
    description: body.description ?? '',
    type,
    grants: body.permissions === undefined || body.permissions === null ? undefined : [...grants.values()],
  };
}

function auditPermissions(grants: readonly store.GrantedPermission[]) {
  return grants.map(({ permission, environment }) => ({ name: permission, ...(environment ? { environment } : {}) }));
}

async function roleWithPermissions(db: Db, role: store.RoleRow) {
  const permissions = await store.rolePermissions(db, role.id);
  return {
    ...roleBody(role),
    permissions: permissions.map((permission) => ({
      id: permission.id,
      name: permission.name,
      displayName: permission.displayName,
      type: permission.type,
      ...(permission.environment ? { environment: permission.environment } : {}),
    })),
  };
}

export async function listRoles(db: Db) {
  return { roles: (await store.listRoles(db)).map(roleBody) };
}

async function requireRole(db: Db, id: number | null): Promise<store.RoleRow> {
  const role = id === null ? undefined : await store.findRole(db, id);
  if (!role) throw notFound(`Could not find role with id: ${id}`);
  return role;
}

export async function getRole(db: Db, id: number | null) {
  return roleWithPermissions(db, await requireRole(db, id));
}

function requireCustom(role: store.RoleRow): void {
  if (!CUSTOM_TYPES.has(role.type)) throw new ApiError(403, 'InvalidOperationError', 'You cannot change built in roles.');
}

/** A taken name is 409 on create and update, as Unleash answers (validate reports it as 400). */
async function validateForWrite(db: Db, body: RoleDefinition, exceptId?: number): Promise<ValidRole> {
  if (await store.roleNameTaken(db, body.name, exceptId)) throw conflict(`There already exists a role with the name ${body.name}`);
  return validateDefinition(db, body, exceptId);
}

export async function createRole(db: Db, actor: Actor, body: RoleDefinition) {
  const role = await validateForWrite(db, body);
  const grants = role.grants ?? [];
  for (let attempt = 0; ; attempt++) {
    const createdAt = new Date().toISOString();
    const row = {
      id: await store.nextRoleId(db),
      name: role.name,
      description: role.description,
      type: role.type,
      createdAt,
      createdByUserId: actor.userId,
      updatedAt: null,
    };
    try {
      await runBatch(db, [
        store.insertRoleStatement(db, row),
        ...store.grantStatements(db, row.id, grants, createdAt),
        auditEvent(db, actor, { type: 'role-created', data: { ...roleBody(row), permissions: auditPermissions(grants) } }),
      ]);
      return roleWithPermissions(db, row);
    } catch (error) {
      if (isUniqueViolation(error, 'roles.type, roles.name')) throw conflict(`There already exists a role with the name ${role.name}`);
      if (!isUniqueViolation(error, 'roles.id') || attempt >= 4) throw error;
    }
  }
}

export async function updateRole(db: Db, actor: Actor, id: number | null, body: RoleDefinition) {
  const before = await requireRole(db, id);
  requireCustom(before);
  // A body without `type` keeps the stored one: defaulting to `custom` here would silently
  // turn a root-custom role into a project role and drop its root permissions' meaning.
  const role = await validateForWrite(db, { ...body, type: body.type ?? (before.type as CustomRoleType) }, before.id);
  const previousGrants = (await store.rolePermissions(db, before.id)).map((grant) => ({
    permission: grant.name,
    environment: grant.environment,
  }));
  const now = new Date().toISOString();
  const statements: Statement[] = [
    store.updateRoleStatement(db, before.id, { name: role.name, description: role.description, type: role.type, updatedAt: now }),
  ];
  if (role.grants !== undefined)
    statements.push(store.revokeAllStatement(db, before.id), ...store.grantStatements(db, before.id, role.grants, now));
  const after = { ...before, name: role.name, description: role.description, type: role.type, updatedAt: now };
  statements.push(
    auditEvent(db, actor, {
      type: 'role-updated',
      data: { ...roleBody(after), permissions: auditPermissions(role.grants ?? previousGrants) },
      preData: { ...roleBody(before), permissions: auditPermissions(previousGrants) },
    }),
  );
  try {
    await runBatch(db, statements);
  } catch (error) {
    if (isUniqueViolation(error, 'roles.type, roles.name')) throw conflict(`There already exists a role with the name ${role.name}`);
    throw error;
  }
  // Its holders' grants change: at once in this isolate, within ISOLATE_CACHE_TTL_MS elsewhere.
  forgetAllUsers();
  return roleWithPermissions(db, after);
}

export async function deleteRole(db: Db, actor: Actor, id: number | null): Promise<void> {
  const role = await requireRole(db, id);
  requireCustom(role);
  const holders = await store.roleHolders(db, role.id);
  if (holders.users > 0 || holders.tokens > 0) {
    throw new ApiError(
      400,
      'RoleInUseError',
      `Role is in use by users(${holders.users}) or public signup tokens(${holders.tokens}). You cannot delete a role that is in use without first removing the role from the users and tokens.`,
    );
  }
  const grants = (await store.rolePermissions(db, role.id)).map((grant) => ({ permission: grant.name, environment: grant.environment }));
  await runBatch(db, [
    store.deleteRoleStatement(db, role.id),
    auditEvent(db, actor, { type: 'role-deleted', preData: { ...roleBody(role), permissions: auditPermissions(grants) } }),
  ]);
}

/** The permission catalogue the role editor shows, as Unleash Enterprise lists it. */
export async function permissionCatalogue(db: Db) {
  const [all, environmentNames] = await Promise.all([store.allPermissions(db), store.environmentNames(db)]);
  const entry = (row: store.PermissionRow) => ({ id: row.id, name: row.permission, displayName: row.displayName, type: row.type });
  const ofType = (type: string) => all.filter((row) => row.type === type).map(entry);
  return {
    permissions: {
      root: ofType('root'),
      project: ofType('project'),
      environments: environmentNames.map((name) => ({
        name,
        permissions: ofType('environment').map((permission) => ({ ...permission, environment: name })),
      })),
    },
    version: 1,
  };
}
