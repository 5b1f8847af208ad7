import * as v from 'valibot';
import { RoleAnswer } from '../roles/schema';
import { UserAnswer } from '../users/schema';

const id = v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1), v.maxValue(2_147_483_647));
const ids = v.pipe(v.array(id), v.maxLength(80, 'at most 80 ids at once'));

/** `POST /projects/:projectId/access`: every listed role for every listed user and group. */
export const AddAccessSchema = v.object({
  roles: ids,
  users: v.optional(ids, []),
  groups: v.optional(ids, []),
});

/** `PUT /projects/:projectId/users/:userId/roles`: the user's project roles, replaced. */
export const SetRolesSchema = v.object({ roles: ids });

/** `POST /projects/:projectId/role/:roleId/access` (the older form, still in Unleash 6). */
export const RoleAccessSchema = v.object({
  users: v.optional(v.pipe(v.array(v.object({ id })), v.maxLength(80, 'at most 80 users at once')), []),
  groups: v.optional(v.pipe(v.array(v.object({ id })), v.maxLength(80, 'at most 80 groups at once')), []),
});

/** What `GET /api/admin/user-admin/access` answers with status 200. */
export const GetBaseUsersAndGroupsResponse = v.object({
  users: v.array(
    v.object({
      id: v.number(),
      username: v.optional(v.string()),
      accountType: v.string(),
      email: v.optional(v.string()),
    }),
  ),
  groups: v.array(v.unknown()),
});

const ProjectRoleAnswer = v.object({
  id: v.number(),
  name: v.nullable(v.string()),
  displayName: v.string(),
  type: v.string(),
  hasPermission: v.boolean(),
});

/** What `GET /api/admin/user-admin/:id/permissions` answers with status 200. */
export const GetUserPermissionsResponse = v.object({
  overview: v.object({
    root: v.array(ProjectRoleAnswer),
    project: v.array(ProjectRoleAnswer),
    environment: v.array(
      v.object({
        environment: v.nullable(v.string()),
        id: v.number(),
        name: v.nullable(v.string()),
        displayName: v.string(),
        type: v.string(),
        hasPermission: v.boolean(),
      }),
    ),
  }),
  user: UserAnswer,
  rootRole: v.object({
    id: v.number(),
    name: v.nullable(v.string()),
    type: v.string(),
    description: v.nullable(v.string()),
  }),
  projectRoles: v.array(RoleAnswer),
});

/** What `GET /api/admin/projects/:projectId/access` answers with status 200. */
export const GetProjectAccessResponse = v.object({
  roles: v.array(
    v.object({
      id: v.number(),
      type: v.string(),
      name: v.nullable(v.string()),
      description: v.nullable(v.string()),
      project: v.nullable(v.string()),
    }),
  ),
  groups: v.array(v.unknown()),
  users: v.array(
    v.object({
      ...UserAnswer.entries,
      addedAt: v.string(),
      roleId: v.number(),
      roles: v.array(v.number()),
    }),
  ),
});
