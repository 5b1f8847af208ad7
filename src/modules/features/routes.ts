import type { RequestContext } from '../../auth/guard';
import { getDb } from '../../db/client';
import { readJsonBody } from '../../http/body';
import { pathParam } from '../../http/params';
import { empty, json } from '../../http/responses';
import { parseInput } from '../../http/validation';
import { CompleteLifecycleSchema, ReviveSchema, StaleSchema, StrategySchema, VariantsSchema } from './schema';
import * as service from './service';

const project = (request: RequestContext['request']) => pathParam(request, 'projectId');
const feature = (request: RequestContext['request']) => pathParam(request, 'featureName');
const environment = (request: RequestContext['request']) => pathParam(request, 'environment');

export async function create({ request, env, principal }: RequestContext): Promise<Response> {
  const body = await readJsonBody(request);
  const created = await service.createFeature(getDb(env), principal, project(request), body);
  return json(created, 201, {
    location: `/api/admin/projects/${encodeURIComponent(created.project)}/features/${encodeURIComponent(created.name)}`,
  });
}

export async function get({ request, env }: RequestContext): Promise<Response> {
  return json(await service.getFeature(getDb(env), project(request), feature(request)));
}

export async function update({ request, env, principal }: RequestContext): Promise<Response> {
  const body = await readJsonBody(request);
  return json(await service.updateFeature(getDb(env), principal, project(request), feature(request), body));
}

export async function patch({ request, env, principal }: RequestContext): Promise<Response> {
  const body = await readJsonBody(request);
  return json(await service.patchFeature(getDb(env), principal, project(request), feature(request), body));
}

export async function archive({ request, env, principal }: RequestContext): Promise<Response> {
  await service.archiveFeature(getDb(env), principal, project(request), feature(request));
  return empty(202);
}

export async function stale({ request, env, principal }: RequestContext): Promise<Response> {
  const body = parseInput(StaleSchema, await readJsonBody(request), '/body');
  await service.setStale(getDb(env), principal, project(request), body.features, body.stale);
  return empty(202);
}

export async function reviveOne({ request, env, principal }: RequestContext): Promise<Response> {
  await service.reviveFeatures(getDb(env), principal, [pathParam(request, 'featureName')]);
  return empty(200);
}

export async function reviveInProject({ request, env, principal }: RequestContext): Promise<Response> {
  const body = parseInput(ReviveSchema, await readJsonBody(request), '/body');
  await service.reviveFeatures(getDb(env), principal, body.features, project(request));
  return empty(200);
}

export async function listArchived({ env }: RequestContext): Promise<Response> {
  return json(await service.listArchived(getDb(env)));
}

export async function listArchivedInProject({ request, env }: RequestContext): Promise<Response> {
  return json(await service.listArchived(getDb(env), project(request)));
}

export async function deleteArchived({ request, env, principal }: RequestContext): Promise<Response> {
  await service.deleteArchived(getDb(env), principal, feature(request));
  return empty(200);
}

export async function environmentOn({ request, env, principal }: RequestContext): Promise<Response> {
  await service.setEnvironmentEnabled(getDb(env), principal, project(request), feature(request), environment(request), true);
  return empty(200);
}

export async function environmentOff({ request, env, principal }: RequestContext): Promise<Response> {
  await service.setEnvironmentEnabled(getDb(env), principal, project(request), feature(request), environment(request), false);
  return empty(200);
}

export async function listStrategies({ request, env }: RequestContext): Promise<Response> {
  return json(await service.listStrategies(getDb(env), project(request), feature(request), environment(request)));
}

export async function getStrategy({ request, env }: RequestContext): Promise<Response> {
  return json(
    await service.getStrategy(getDb(env), project(request), feature(request), environment(request), pathParam(request, 'strategyId')),
  );
}

export async function addStrategy({ request, env, principal }: RequestContext): Promise<Response> {
  const body = parseInput(StrategySchema, await readJsonBody(request), '/body');
  return json(await service.addStrategy(getDb(env), principal, project(request), feature(request), environment(request), body));
}

export async function updateStrategy({ request, env, principal }: RequestContext): Promise<Response> {
  const body = parseInput(StrategySchema, await readJsonBody(request), '/body');
  const strategyId = pathParam(request, 'strategyId');
  return json(
    await service.updateStrategy(getDb(env), principal, project(request), feature(request), environment(request), strategyId, body),
  );
}

export async function deleteStrategy({ request, env, principal }: RequestContext): Promise<Response> {
  await service.deleteStrategy(
    getDb(env),
    principal,
    project(request),
    feature(request),
    environment(request),
    pathParam(request, 'strategyId'),
  );
  return empty(200);
}

export async function getVariants({ request, env }: RequestContext): Promise<Response> {
  return json(await service.getEnvironmentVariants(getDb(env), project(request), feature(request), environment(request)));
}

export async function putVariants({ request, env, principal }: RequestContext): Promise<Response> {
  const variants = parseInput(VariantsSchema, await readJsonBody(request), '/body');
  return json(
    await service.setEnvironmentVariants(getDb(env), principal, project(request), feature(request), environment(request), variants),
  );
}

export async function addFavorite({ request, env, principal }: RequestContext): Promise<Response> {
  await service.setFavorite(getDb(env), principal, project(request), feature(request), true);
  return empty(200);
}

export async function removeFavorite({ request, env, principal }: RequestContext): Promise<Response> {
  await service.setFavorite(getDb(env), principal, project(request), feature(request), false);
  return empty(200);
}

export async function addDependency({ request, env, principal }: RequestContext): Promise<Response> {
  const body = await readJsonBody(request);
  await service.addDependency(getDb(env), principal, project(request), feature(request), body);
  return empty(200);
}

export async function removeDependency({ request, env, principal }: RequestContext): Promise<Response> {
  await service.removeDependency(getDb(env), principal, project(request), feature(request), pathParam(request, 'parent'));
  return empty(200);
}

export async function removeDependencies({ request, env, principal }: RequestContext): Promise<Response> {
  await service.removeDependency(getDb(env), principal, project(request), feature(request));
  return empty(200);
}

export async function getLifecycle({ request, env }: RequestContext): Promise<Response> {
  return json(await service.getLifecycle(getDb(env), project(request), feature(request)));
}

export async function complete({ request, env, principal }: RequestContext): Promise<Response> {
  const body = parseInput(CompleteLifecycleSchema, await readJsonBody(request), '/body');
  await service.completeFeature(getDb(env), principal, project(request), feature(request), body.status, body.statusValue ?? null);
  return empty(200);
}

export async function validateName({ request, env }: RequestContext): Promise<Response> {
  await service.validateNewName(getDb(env), await readJsonBody(request));
  return empty(200);
}

export async function parentVariants({ request, env }: RequestContext): Promise<Response> {
  return json(await service.possibleParentVariants(getDb(env), feature(request)));
}
