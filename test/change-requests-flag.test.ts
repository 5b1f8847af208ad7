/**
 * Flag-level changes through change requests (archive, dependencies): the UI's bulk draft (one
 * change per flag), each applied in the request's batch with the direct write's checks and
 * event, the refusal of the direct writes where change requests are on in any environment of
 * the project, and a change made meanwhile stopping the apply with nothing written.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { adminOk, createProject } from './support/admin';
import { count, lastEvent, parsedEvent, rows } from './support/db';
import { bodyOf, call, createToken, expectError } from './support/http';
import { unique } from './support/names';
import { signInAs } from './support/users';

const PROD = 'production';
let project: string;
let author: string;
let approver: string;
let clientKey: string;

const draftPath = () => `/api/admin/projects/${project}/environments/${PROD}/change-requests`;
const requestPath = (id: number) => `/api/admin/projects/${project}/change-requests/${id}`;

async function flag(): Promise<string> {
  const name = unique('cra');
  await adminOk('POST', `/api/admin/projects/${project}/features`, { name });
  return name;
}

const links = (child: string) => count('SELECT count(*) AS n FROM dependent_features WHERE child = ?', child);
const archived = (name: string) => count('SELECT count(*) AS n FROM features WHERE name = ? AND archived_at IS NOT NULL', name);

async function ok(token: string, method: string, path: string, body?: unknown) {
  const response = await call(method, path, { token, body });
  if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return bodyOf(response);
}

/** The author's draft of the changes, sent to review and approved. */
async function approved(changes: unknown): Promise<number> {
  const draft = await ok(author, 'POST', draftPath(), changes);
  await ok(author, 'PUT', `${requestPath(draft.id)}/state`, { state: 'In review' });
  expect((await ok(approver, 'PUT', `${requestPath(draft.id)}/state`, { state: 'Approved' })).state).toBe('Approved');
  return draft.id;
}

async function clientNames(): Promise<string[]> {
  const answer = await bodyOf(await call('GET', '/api/client/features', { token: clientKey }));
  return answer.features.map((feature: { name: string }) => feature.name);
}

beforeAll(async () => {
  project = await createProject(unique('cra'), ['development', PROD]);
  const role = await bodyOf(
    await adminOk('POST', '/api/admin/roles', {
      name: unique('cra-role'),
      description: 'archives through change requests',
      type: 'custom',
      permissions: [
        { name: 'DELETE_FEATURE' },
        { name: 'UPDATE_FEATURE_DEPENDENCY' },
        { name: 'UPDATE_FEATURE_VARIANTS' },
        { name: 'APPROVE_CHANGE_REQUEST', environment: PROD },
        { name: 'APPLY_CHANGE_REQUEST', environment: PROD },
      ],
    }),
  );
  const member = async (userId: number) => {
    await adminOk('POST', `/api/admin/projects/${project}/access`, { roles: [role.id], users: [userId] });
  };
  author = await signInAs('Viewer', member);
  approver = await signInAs('Viewer', member);
  await adminOk('PUT', `/api/admin/projects/${project}/environments/${PROD}/change-requests/config`, {
    changeRequestsEnabled: true,
    requiredApprovals: 1,
  });
  clientKey = await createToken({ tokenName: unique('cra-sdk'), type: 'client', environment: PROD, projects: [project] });
});

describe('archiveFeature through a change request', () => {
  it('drafts the UI bulk body, archives nothing until applied, then archives both with their events', async () => {
    const [one, two] = [await flag(), await flag()];
    const id = await approved([one, two].map((feature) => ({ action: 'archiveFeature', feature })));
    const request = await ok(author, 'GET', requestPath(id));
    expect(request.features.map((feature: { name: string }) => feature.name).sort()).toEqual([one, two].sort());
    expect(await archived(one)).toBe(0);
    expect(await clientNames()).toEqual(expect.arrayContaining([one, two]));

    await ok(approver, 'PUT', `${requestPath(id)}/state`, { state: 'Applied' });
    expect(await archived(one)).toBe(1);
    expect(await archived(two)).toBe(1);
    expect(await clientNames()).not.toContain(one);
    const events = await rows<{ feature_name: string; project: string; created_by_user_id: number }>(
      "SELECT feature_name, project, created_by_user_id FROM events WHERE type = 'feature-archived' AND feature_name IN (?, ?)",
      one,
      two,
    );
    expect(events).toHaveLength(2);
    expect(events.every((event) => event.project === project)).toBe(true);
    expect(parsedEvent(await lastEvent('change-request-applied'))?.data).toMatchObject({ changeRequestId: id });
  });

  it('refuses to draft the archive of a flag others depend on (as the direct archive does)', async () => {
    const [parent, child] = [await flag(), await flag()];
    await adminOk('POST', `/api/admin/projects/${project}/features/${child}/dependencies`, { feature: parent });
    const response = await call('POST', draftPath(), { token: author, body: { action: 'archiveFeature', feature: parent } });
    await expectError(response, 403, 'InvalidOperationError');
  });

  it('answers 409 and archives nothing when a dependency was added after approval', async () => {
    const [parent, child] = [await flag(), await flag()];
    const id = await approved({ action: 'archiveFeature', feature: parent });
    await adminOk('POST', `/api/admin/projects/${project}/features/${child}/dependencies`, { feature: parent });
    await expectError(await call('PUT', `${requestPath(id)}/state`, { token: approver, body: { state: 'Applied' } }), 409, 'ConflictError');
    expect(await archived(parent)).toBe(0);
    expect((await ok(author, 'GET', requestPath(id))).state).toBe('Approved');
  });
});

describe('direct archive where change requests are on in an environment of the project', () => {
  it('refuses a single archive with 403 naming SKIP_CHANGE_REQUEST, and writes nothing', async () => {
    const name = await flag();
    const response = await call('DELETE', `/api/admin/projects/${project}/features/${name}`, { token: author });
    const body = await expectError(response, 403, 'NoAccessError');
    expect(body.message).toContain('SKIP_CHANGE_REQUEST');
    expect(await archived(name)).toBe(0);
  });

  it('refuses a bulk archive too, and writes nothing', async () => {
    const name = await flag();
    const response = await call('POST', `/api/admin/projects/${project}/archive`, { token: author, body: { features: [name] } });
    await expectError(response, 403, 'NoAccessError');
    expect(await archived(name)).toBe(0);
  });

  it('lets an admin token archive directly', async () => {
    const name = await flag();
    await adminOk('DELETE', `/api/admin/projects/${project}/features/${name}`);
    expect(await archived(name)).toBe(1);
  });
});

describe('addDependency and deleteDependency through a change request', () => {
  it('links nothing until applied, then links with the direct write event; removal likewise', async () => {
    const [parent, child] = [await flag(), await flag()];
    const payload = { feature: parent, enabled: true, variants: [] };
    const id = await approved([{ action: 'addDependency', feature: child, payload }]);
    expect(await links(child)).toBe(0);
    await ok(approver, 'PUT', `${requestPath(id)}/state`, { state: 'Applied' });
    expect(await rows('SELECT parent, enabled FROM dependent_features WHERE child = ?', child)).toEqual([{ parent, enabled: 1 }]);
    const added = await lastEvent('feature-dependency-added');
    expect(added?.feature_name).toBe(child);
    expect(parsedEvent(added)?.data).toEqual({ feature: parent, enabled: true, variants: [] });

    const removal = await approved([{ action: 'deleteDependency', feature: child }]);
    expect(await links(child)).toBe(1);
    await ok(approver, 'PUT', `${requestPath(removal)}/state`, { state: 'Applied' });
    expect(await links(child)).toBe(0);
    expect((await lastEvent('feature-dependencies-removed'))?.feature_name).toBe(child);
  });

  it('checks the payload when drafting: an archived parent is refused as the direct write refuses it', async () => {
    const [parent, child] = [await flag(), await flag()];
    await adminOk('DELETE', `/api/admin/projects/${project}/features/${parent}`);
    const body = { action: 'addDependency', feature: child, payload: { feature: parent } };
    await expectError(await call('POST', draftPath(), { token: author, body }), 403, 'InvalidOperationError');
  });

  it('answers 409 and links nothing when the parent became a child meanwhile', async () => {
    const [grand, parent, child] = [await flag(), await flag(), await flag()];
    const id = await approved({ action: 'addDependency', feature: child, payload: { feature: parent } });
    await adminOk('POST', `/api/admin/projects/${project}/features/${parent}/dependencies`, { feature: grand });
    await expectError(await call('PUT', `${requestPath(id)}/state`, { token: approver, body: { state: 'Applied' } }), 409, 'ConflictError');
    expect(await links(child)).toBe(0);
  });

  it('refuses direct dependency writes with 403 naming SKIP_CHANGE_REQUEST, writing nothing', async () => {
    const [parent, child] = [await flag(), await flag()];
    const path = `/api/admin/projects/${project}/features/${child}/dependencies`;
    const refused = await expectError(await call('POST', path, { token: author, body: { feature: parent } }), 403, 'NoAccessError');
    expect(refused.message).toContain('SKIP_CHANGE_REQUEST');
    expect(await links(child)).toBe(0);
    await adminOk('POST', path, { feature: parent });
    await expectError(await call('DELETE', path, { token: author }), 403, 'NoAccessError');
    await expectError(await call('DELETE', `${path}/${parent}`, { token: author }), 403, 'NoAccessError');
    expect(await links(child)).toBe(1);
  });
});

describe('flag-level variant writes (every environment at once)', () => {
  it('are refused with 403 where change requests are on in the project, writing nothing; an admin token may', async () => {
    const name = await flag();
    const path = `/api/admin/projects/${project}/features/${name}/variants`;
    const variants = [{ name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default' }];
    const stored = () => count("SELECT count(*) AS n FROM feature_environments WHERE feature_name = ? AND variants <> '[]'", name);
    const refused = await expectError(await call('PUT', path, { token: author, body: variants }), 403, 'NoAccessError');
    expect(refused.message).toContain('SKIP_CHANGE_REQUEST');
    const patch = [{ op: 'add', path: '/0', value: variants[0] }];
    await expectError(await call('PATCH', path, { token: author, body: patch }), 403, 'NoAccessError');
    expect(await stored()).toBe(0);
    await adminOk('PUT', path, variants);
    expect(await stored()).toBe(2);
  });
});
