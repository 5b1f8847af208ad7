// Change-request settings of an Enterprise source: per project and environment, whether change
// requests are on and how many approvals they need (an OSS source has none: nothing to carry).
// Written with the settings route the UI uses; compared first, so a second run writes nothing.
import * as read from './source.mjs';
import { same } from './flags.mjs';

const KIND = 'change-request settings';
const configPath = (project) => `/api/admin/projects/${encodeURIComponent(project)}/change-requests/config`;

/** The settings that say something: on, or off with approvals other than the default. */
const setting = (row) => ({ changeRequestsEnabled: Boolean(row.changeRequestEnabled), requiredApprovals: row.requiredApprovals ?? 1 });

export async function copyChangeRequestConfigs({ source, target, version, projects, report, write, tryEach, overwrite }) {
  const configs = await read.readChangeRequestConfigs(
    source,
    version,
    projects.map((project) => project.id),
  );
  if (!configs) return;
  const items = [];
  for (const [project, rows] of configs) for (const row of rows) items.push({ name: `${project}/${row.environment}`, project, row });
  report.count(KIND, 'read', items.length);
  const ours = new Map();
  await tryEach(KIND, items, async ({ name, project, row }) => {
    if (!ours.has(project)) ours.set(project, await target.send('GET', configPath(project), undefined, { allowed: [404] }));
    const answer = ours.get(project);
    const current = (Array.isArray(answer.body) ? answer.body : []).find((candidate) => candidate.environment === row.environment);
    if (!current)
      return report.cannotCopy(KIND, name, `environment ${row.environment} is not in project ${project} here`, 'copy the project first');
    const theirs = setting(row);
    const mine = setting(current);
    if (same(theirs, mine)) return report.count(KIND, 'unchanged');
    // Settings of ours that are on and differ were chosen here: kept unless --overwrite.
    if (mine.changeRequestsEnabled && !overwrite) return report.conflict(KIND, name, { source: theirs, target: mine });
    await write(KIND, name, () =>
      target.send(
        'PUT',
        `/api/admin/projects/${encodeURIComponent(project)}/environments/${encodeURIComponent(row.environment)}/change-requests/config`,
        theirs,
      ),
    );
    report.count(KIND, mine.changeRequestsEnabled ? 'updated' : 'created');
  });
}

/** `--verify`: where the source has settings, ours must say the same (lines name each difference). */
export async function compareChangeRequestConfigs(source, target, version, environments, projectIds) {
  const lines = [];
  if (!version.enterprise) return lines;
  const ourEnvironments = new Map((await target.get('/api/admin/environments')).environments.map((e) => [e.name, e]));
  for (const environment of environments) {
    if (environment.requiredApprovals === null) continue;
    const mine = ourEnvironments.get(environment.name)?.requiredApprovals ?? null;
    if (mine !== environment.requiredApprovals)
      lines.push(`environment ${environment.name}: requiredApprovals ${environment.requiredApprovals} (source) vs ${mine} (ours)`);
  }
  const configs = (await read.readChangeRequestConfigs(source, version, projectIds)) ?? new Map();
  for (const [project, rows] of configs) {
    const answer = await target.send('GET', configPath(project), undefined, { allowed: [404] });
    const ours = new Map((Array.isArray(answer.body) ? answer.body : []).map((row) => [row.environment, setting(row)]));
    for (const row of rows) {
      const theirs = setting(row);
      const mine = ours.get(row.environment);
      if (!same(theirs, mine ?? null))
        lines.push(
          `change requests of ${project}/${row.environment}: ${JSON.stringify(theirs)} (source) vs ${JSON.stringify(mine ?? null)} (ours)`,
        );
    }
  }
  return lines;
}
