/** Project access: `GET/POST /api/admin/projects/:projectId/access`, a user's roles in a project. */
import * as v from 'valibot';
import type { RequestContext } from '../../auth/guard';
import { getDb } from '../../db/client';
import { readJsonBody } from '../../http/body';
import { pathParam } from '../../http/params';
import { empty, json } from '../../http/responses';
import { integerId, parseInput } from '../../http/validation';
import { AddAccessSchema, RoleAccessSchema, SetRolesSchema } from './schema';
import { userAccessOverview } from './overview';
import * as service from './service';
import { listUsers } from '../users/service';

const UserParams = v.object({ userId: v.pipe(integerId, v.integer(), v.minValue(1), v.maxValue(2_147_483_647)) });

function userId(request: RequestContext['request']): number {
  return parseInput(UserParams, { userId: pathParam(request, 'userId') }, '/params').userId;
}

export async function list({ request, env }: RequestContext): Promise<Response> {
  return json(await service.projectAccess(getDb(env), pathParam(request, 'projectId')));
}

export async function add({ request, env, principal }: RequestContext): Promise<Response> {
  const body = parseInput(AddAccessSchema, await readJsonBody(request), '/body');
  await service.addAccess(getDb(env), principal, pathParam(request, 'projectId'), body);
  return empty(200);
}

/** The older form: one role for the listed users (and groups, which this service does not have). */
export async function addRoleAccess({ request, env, principal }: RequestContext): Promise<Response> {
  const roleId = parseInput(
    v.object({ roleId: v.pipe(integerId, v.integer(), v.minValue(1), v.maxValue(2_147_483_647)) }),
    { roleId: pathParam(request, 'roleId') },
    '/params',
  ).roleId;
  const body = parseInput(RoleAccessSchema, await readJsonBody(request), '/body');
  await service.addAccess(getDb(env), principal, pathParam(request, 'projectId'), {
    roles: [roleId],
    users: body.users.map((user) => user.id),
    groups: body.groups.map((group) => group.id),
  });
  return empty(200);
}

export async function setUserRoles({ request, env, principal }: RequestContext): Promise<Response> {
  const id = userId(request);
  const body = parseInput(SetRolesSchema, await readJsonBody(request), '/body');
  await service.setUserRoles(getDb(env), principal, pathParam(request, 'projectId'), id, body.roles);
  return empty(200);
}

export async function removeUser({ request, env, principal }: RequestContext): Promise<Response> {
  await service.removeUserAccess(getDb(env), principal, pathParam(request, 'projectId'), userId(request));
  return empty(200);
}

const OverviewQuery = v.object({
  project: v.optional(v.pipe(v.string(), v.maxLength(100))),
  environment: v.optional(v.pipe(v.string(), v.maxLength(100))),
});

export async function userPermissions({ request, env }: RequestContext): Promise<Response> {
  const id = parseInput(
    v.object({ id: v.pipe(integerId, v.integer(), v.minValue(1), v.maxValue(2_147_483_647)) }),
    { id: pathParam(request, 'id') },
    '/params',
  ).id;
  const query = new URL(request.url).searchParams;
  const { project, environment } = parseInput(
    OverviewQuery,
    { project: query.get('project') || undefined, environment: query.get('environment') || undefined },
    '/query',
  );
  return json(await userAccessOverview(env, id, project, environment));
}

/**
 * `GET /api/admin/user-admin/access`: everyone who can be given access (the UI's project-access
 * picker), open to every signed-in user as in Unleash. Groups do not exist here.
 */
export async function assignable({ env }: RequestContext): Promise<Response> {
  const { users } = await listUsers(getDb(env));
  return json({
    users: users.map((user) => ({
      id: user.id,
      ...('name' in user ? { name: user.name } : {}),
      ...('username' in user ? { username: user.username } : {}),
      ...('email' in user ? { email: user.email } : {}),
      accountType: user.accountType,
    })),
    groups: [],
  });
}
