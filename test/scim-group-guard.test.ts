import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '../src/db/client';
import { refuseHandEditOfScimGroup } from '../src/db/scim';
import { rows } from './support/db';
import { bodyOf, call } from './support/http';
import { unique } from './support/names';
import { enableScim, oktaUser, scim, SCIM_GROUP } from './support/scim';

let token: string;
beforeAll(async () => {
  token = await enableScim();
});

/** The rule the groups API's update applies (src/db/scim.ts), checked against a provisioned group. */
describe('refuseHandEditOfScimGroup', () => {
  it('refuses a rename, other members or other SSO mappings of a SCIM group; allows role and description edits', async () => {
    const user = await bodyOf(await scim(token, 'POST', '/Users', oktaUser(`${unique('g')}@example.com`)));
    const group = await bodyOf(
      await scim(token, 'POST', '/Groups', { schemas: [SCIM_GROUP], displayName: unique('Guarded'), members: [{ value: user.id }] }),
    );
    const [row] = await rows<{ id: number; userId: number }>(
      'SELECT g.id, gu.user_id AS userId FROM groups g JOIN group_user gu ON gu.group_id = g.id WHERE g.scim_id = ?',
      group.id,
    );
    const db = getDb(env);
    const refusal = (edit: Parameters<typeof refuseHandEditOfScimGroup>[2]) =>
      refuseHandEditOfScimGroup(db, row!.id, edit).then(
        () => null,
        (error: { status: number; name: string; message: string }) => [error.status, error.name, error.message],
      );
    const forbidden = [
      403,
      'ForbiddenError',
      'This group is managed by your SCIM provider, only the role and description can be changed manually',
    ];
    expect(await refusal({ name: 'By hand' })).toEqual(forbidden);
    expect(await refusal({ userIds: [] })).toEqual(forbidden);
    expect(await refusal({ mappingsSSO: ['okta-group'] })).toEqual(forbidden);
    expect(await refusal({ name: group.displayName, userIds: [row!.userId], mappingsSSO: [] })).toBeNull();
    // Once SCIM is off, the group is the admins' again.
    await call('POST', '/api/admin/scim-settings', { body: { enabled: false } });
    expect(await refusal({ name: 'By hand' })).toBeNull();
  });
});
