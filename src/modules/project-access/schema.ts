import * as v from 'valibot';

const id = v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1), v.maxValue(2_147_483_647));
const ids = v.pipe(v.array(id), v.maxLength(80, 'at most 80 ids at once'));

/** `POST /projects/:projectId/access`: every listed role for every listed user and group. */
export const AddAccessSchema = v.object({
  roles: ids,
  users: v.optional(ids, []),
  groups: v.optional(ids, []),
});
export type AddAccessRequest = v.InferOutput<typeof AddAccessSchema>;

/** `PUT /projects/:projectId/users/:userId/roles`: the user's project roles, replaced. */
export const SetRolesSchema = v.object({ roles: ids });

/** `POST /projects/:projectId/role/:roleId/access` (the older form, still in Unleash 6). */
export const RoleAccessSchema = v.object({
  users: v.optional(v.pipe(v.array(v.object({ id })), v.maxLength(80, 'at most 80 users at once')), []),
  groups: v.optional(v.pipe(v.array(v.object({ id })), v.maxLength(80, 'at most 80 groups at once')), []),
});
