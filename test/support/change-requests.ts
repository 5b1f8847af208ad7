/** What the change-request tests share: people with a project role, and moving a request. */
import { expect } from 'vitest';
import { adminOk } from './admin';
import { bodyOf, call } from './http';
import { unique } from './names';
import { signInAs } from './users';

/** Signs in `count` Viewers holding, in `project`, a custom role with `permissions`; answers their tokens. */
export async function projectMembers(
  project: string,
  permissions: { name: string; environment?: string }[],
  count: number,
): Promise<string[]> {
  const role = await bodyOf(
    await adminOk('POST', '/api/admin/roles', {
      name: unique('cr-role'),
      description: 'through change requests',
      type: 'custom',
      permissions,
    }),
  );
  const member = async (userId: number) => {
    await adminOk('POST', `/api/admin/projects/${project}/access`, { roles: [role.id], users: [userId] });
  };
  const tokens = [];
  for (let i = 0; i < count; i++) tokens.push(await signInAs('Viewer', member));
  return tokens;
}

/** Moves a request (PUT …/:id/state), which must succeed; answers the request. */
export async function moveRequestOk(project: string, token: string, id: number, body: Record<string, unknown>) {
  const response = await call('PUT', `/api/admin/projects/${project}/change-requests/${id}/state`, { token, body });
  expect(response.status, `state ${JSON.stringify(body)}: ${response.status}`).toBe(200);
  return bodyOf(response);
}
