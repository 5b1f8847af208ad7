// The flags step of the copy (scripts/migrate/copy.mjs): each project's flags exported from
// the source and imported into our Worker, compared first so a second run writes nothing.
import * as read from './source.mjs';
import { compareExports, importPayload } from './flags.mjs';

export async function copyFlags({ source, target, projects, report, options, state, offered, mine, write }) {
  const { overwrite, dryRun } = options;
  const linkOperation = offered.has('POST /api/admin/projects/{}/features/{}/link');
  await waitForPendingJobs(target, state);
  for (const project of projects) {
    const names = (await read.readFlagNames(source, project.id, options.prefix)).filter(({ name }) => mine(name));
    report.count('flags', 'read', names.length);
    if (names.length === 0) continue;
    // Archived on both sides: done (our export leaves archived flags out, as Unleash's UI does).
    const ourArchived = await archivedHere(target, project.id, options.prefix);
    const outcome = new Map();
    for (const flag of names) {
      if (!ourArchived.has(flag.name)) continue;
      if (flag.archived) outcome.set(flag.name, 'unchanged');
      else {
        outcome.set(flag.name, 'conflict');
        report.conflict('flags', `${project.id}/${flag.name}`, { source: 'active', target: 'archived' });
      }
    }
    const flagNames = names.filter(({ name }) => !outcome.has(name)).map(({ name }) => name);
    for (const name of flagNames) outcome.set(name, 'unchanged');
    const enabledIn = new Map(names.map((flag) => [flag.name, flag.enabled]));
    const links = new Map();
    const details = new Map();
    for (const environment of project.environments) {
      if (flagNames.length === 0) break;
      const [sourceExport, targetExport] = await Promise.all([
        read.exportFlags(source, flagNames, environment.name),
        // A dry run before the environment exists here: nothing of it is here yet.
        read.exportFlags(target, flagNames, environment.name).catch((error) => {
          if (dryRun && [400, 404].includes(error.status)) return {};
          throw error;
        }),
      ]);
      for (const row of sourceExport.featureEnvironments ?? []) {
        const state = enabledIn.get(row.featureName)?.[environment.name];
        if (state !== undefined) row.enabled = state;
      }
      await orderStrategies(source, project.id, environment.name, sourceExport, details);
      for (const entry of sourceExport.links ?? []) links.set(entry.feature, entry.links);
      const comparison = compareExports(sourceExport, targetExport);
      const toImport = [];
      for (const [name, result] of comparison) {
        if (result.state === 'same') continue;
        if (result.state === 'missing' || overwrite || state.ownsFlag(project.id, name)) {
          toImport.push(name);
          if (outcome.get(name) === 'unchanged') outcome.set(name, result.state === 'missing' ? 'created' : 'updated');
        } else if (outcome.get(name) !== 'conflict') {
          outcome.set(name, 'conflict');
          report.conflict('flags', `${project.id}/${name}`, {
            environment: environment.name,
            source: result.source,
            target: result.target,
          });
        }
      }
      if (toImport.length === 0 || dryRun) continue;
      state.markFlags(project.id, toImport);
      try {
        await write('flags', `${project.id}@${environment.name}`, () =>
          importFlags(target, state, importPayload(sourceExport, toImport, project.id, environment.name)),
        );
      } catch {
        // In the report already (counted there, not as written); the other environments and projects still go.
        for (const name of toImport) outcome.set(name, 'failed');
      }
    }
    // Archived as archived: imported like the others, then archived here.
    const archived = names.filter((flag) => flag.archived && outcome.get(flag.name) !== 'conflict').map((flag) => flag.name);
    if (archived.length > 0 && !dryRun) {
      const toArchive = archived.filter((name) => !ourArchived.has(name));
      if (toArchive.length > 0) {
        await write('flags', `${project.id} (archive)`, () =>
          target.post(`/api/admin/projects/${encodeURIComponent(project.id)}/archive`, { features: toArchive }),
        ).catch(() => undefined);
      }
    }
    for (const [, result] of outcome) if (result !== 'conflict' && result !== 'failed') report.count('flags', result);
    // Links (Unleash 7.x and later)
    const linked = [...links.entries()].filter(([name]) => outcome.get(name) !== 'conflict');
    if (linked.length > 0) {
      if (!linkOperation) {
        for (const [name, flagLinks] of linked) {
          report.cannotCopy(
            'flag links',
            `${project.id}/${name}`,
            `${flagLinks.length} link(s); this Worker offers no flag-link operation yet`,
            'add the links by hand once the Worker offers them, or re-run the migration then',
          );
        }
      } else {
        for (const [name, flagLinks] of linked) {
          const base = `/api/admin/projects/${encodeURIComponent(project.id)}/features/${encodeURIComponent(name)}`;
          const ours = dryRun ? { links: [] } : await target.get(base);
          const existing = new Set((ours.links ?? []).map((link) => `${link.url} ${link.title ?? ''}`));
          for (const link of flagLinks) {
            if (existing.has(`${link.url} ${link.title ?? ''}`)) continue;
            await write(
              'flag links',
              `${project.id}/${name}`,
              () => target.post(`${base}/link`, { url: link.url, ...(link.title ? { title: link.title } : {}) }),
              'created',
            );
          }
        }
      }
    }
  }
  report.progress('flags');
  if (report.kinds.has('flag links')) report.progress('flag links');
}

/** The names of this project's archived flags here, every page of them (our search pages by 50 at most). */
async function archivedHere(target, project, prefix) {
  const names = new Set();
  const narrowed = prefix ? `&query=${encodeURIComponent(prefix)}` : '';
  for (let offset = 0; ;) {
    const page = await target.get(
      `/api/admin/search/features?project=IS:${encodeURIComponent(project)}&archived=IS:true&limit=50&offset=${offset}${narrowed}`,
    );
    for (const feature of page.features) names.add(feature.name);
    offset += page.features.length;
    if (page.features.length === 0 || offset >= page.total) return names;
  }
}

/**
 * Unleash 6.x's export does not list a flag's strategies in their order (sortOrder), which
 * decides which strategy's variants a user gets. Where a flag has several strategies, its
 * order is read from the flag itself (a few requests at a time) and the export sorted by it.
 */
async function orderStrategies(source, project, environment, exported, details) {
  const perFlag = new Map();
  for (const strategy of exported.featureStrategies ?? []) perFlag.set(strategy.featureName, (perFlag.get(strategy.featureName) ?? 0) + 1);
  const needed = [...perFlag].filter(([name, count]) => count > 1 && !details.has(name)).map(([name]) => name);
  await inParallel(needed, 8, async (name) => {
    // 8.x answers 404 for an archived flag: its export order stands.
    const answer = await source.send(
      'GET',
      `/api/admin/projects/${encodeURIComponent(project)}/features/${encodeURIComponent(name)}`,
      undefined,
      { allowed: [404] },
    );
    const flag = answer.status === 200 ? answer.body : {};
    const order = new Map();
    for (const flagEnvironment of flag.environments ?? []) {
      for (const [index, strategy] of (flagEnvironment.strategies ?? []).entries()) {
        order.set(`${flagEnvironment.name}/${strategy.id}`, [strategy.sortOrder ?? 0, index]);
      }
    }
    details.set(name, order);
  });
  const rank = (strategy) => details.get(strategy.featureName)?.get(`${environment}/${strategy.id}`) ?? [0, 0];
  const firstSeen = new Map();
  for (const [index, strategy] of (exported.featureStrategies ?? []).entries())
    if (!firstSeen.has(strategy.featureName)) firstSeen.set(strategy.featureName, index);
  exported.featureStrategies = [...(exported.featureStrategies ?? [])].sort((a, b) => {
    if (a.featureName !== b.featureName) return firstSeen.get(a.featureName) - firstSeen.get(b.featureName);
    const [x, y] = [rank(a), rank(b)];
    return x[0] - y[0] || x[1] - y[1];
  });
}

async function inParallel(items, width, work) {
  let next = 0;
  const lanes = Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) await work(items[next++]);
  });
  await Promise.all(lanes);
}

/** Imports a payload; a large one is queued (202), and is followed until its job ends. */
async function importFlags(target, state, payload) {
  const answer = await target.send('POST', '/api/admin/features-batch/import', payload);
  if (answer.status !== 202) return;
  const location = answer.headers.get('location');
  state.data.pendingJobs.push(location);
  state.save();
  await waitForJob(target, location);
  state.data.pendingJobs = state.data.pendingJobs.filter((job) => job !== location);
  state.save();
}

async function waitForJob(target, location) {
  for (;;) {
    const job = await target.get(location);
    if (job.status === 'completed') return;
    if (job.status === 'failed') throw new Error(`import job ${location} failed: ${JSON.stringify(job.errors ?? job).slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** A run interrupted while our Worker worked through a queued import waits for it first. */
async function waitForPendingJobs(target, state) {
  for (const location of [...state.data.pendingJobs]) {
    try {
      await waitForJob(target, location);
    } catch {
      // A failed or vanished job: the comparison below finds what it did not write.
    }
    state.data.pendingJobs = state.data.pendingJobs.filter((job) => job !== location);
    state.save();
  }
}
