/** Set-up through the admin API (admin token): calls that must succeed, projects, flags. */
import { bodyOf, call } from './http';
import { unique } from './names';

/** An admin call that must succeed (status below 300); fails the test with the answer otherwise. */
export async function adminOk(method: string, path: string, body?: unknown): Promise<Response> {
  const response = await call(method, path, body === undefined ? {} : { body });
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response;
}

/** Creates a project (the given environments attached, else the API's default ones) and returns its id. */
export async function createProject(id: string = unique('p'), environments?: string[]): Promise<string> {
  await adminOk('POST', '/api/admin/projects', { id, name: id, ...(environments ? { environments } : {}) });
  return id;
}

/** Creates a flag (201 expected) and returns the created flag's body. */
export async function createFeature(name: string, extra: Record<string, unknown> = {}, project = 'default') {
  const response = await call('POST', `/api/admin/projects/${project}/features`, { body: { name, ...extra } });
  if (response.status !== 201) throw new Error(`create ${name}: ${response.status} ${await response.text()}`);
  return bodyOf(response);
}

/** A flag as 6.10.1 answers its creation (and records it in `feature-created`): its keys, in its order. */
export const FLAG_KEYS = ['name', 'description', 'type', 'project', 'stale', 'createdAt', 'lastSeenAt', 'impressionData', 'archived'];
