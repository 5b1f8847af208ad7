// The copy, one kind of object after another, in the order their references need:
// environments, projects, context fields, segments, strategies, tag types, flags, integrations,
// roles, users, project access, API tokens. Each step compares before it writes, so a second
// run writes nothing and an interrupted one picks up where it stopped.
import { openSync, writeSync, closeSync, readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import * as read from './source.mjs';
import { compareExports, importPayload } from './flags.mjs';

const MASKED = '*****';
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** What our listings show of a secret: up to 6 characters after its last dot (src/auth/secrets.ts). */
function secretPrefix(secret) {
  const dot = secret.lastIndexOf('.');
  return dot >= 0 ? secret.slice(0, dot + 7) : secret.slice(0, 6);
}

/** Counts per kind, the not-copyable list and the conflicts: what the run prints at the end. */
export class Report {
  constructor(log) {
    this.log = log;
    this.kinds = new Map();
    this.notCopyable = [];
    this.conflicts = [];
    this.failures = [];
  }
  count(kind, outcome, n = 1) {
    const counts = this.kinds.get(kind) ?? { read: 0, created: 0, updated: 0, unchanged: 0, conflict: 0, skipped: 0, failed: 0 };
    counts[outcome] += n;
    this.kinds.set(kind, counts);
  }
  cannotCopy(kind, name, reason, action) {
    this.notCopyable.push({ kind, name, reason, action });
    this.count(kind, 'skipped');
  }
  conflict(kind, name, difference) {
    this.conflicts.push({ kind, name, difference });
    this.count(kind, 'conflict');
  }
  fail(kind, name, error) {
    this.failures.push({ kind, name, error: String(error?.message ?? error) });
    this.count(kind, 'failed');
  }
  progress(kind) {
    const c = this.kinds.get(kind) ?? {};
    const parts = ['created', 'updated', 'unchanged', 'conflict', 'skipped', 'failed']
      .filter((key) => c[key])
      .map((key) => `${c[key]} ${key}`);
    this.log(`  ${kind.padEnd(18)} ${String(c.read ?? 0).padStart(6)} read   ${parts.join(', ') || 'nothing to do'}`);
  }
}

/** Which operations our Worker offers, from its own OpenAPI document. */
export async function targetOperations(target) {
  const document = await target.get('/docs/openapi.json');
  const operations = new Set();
  for (const [route, methods] of Object.entries(document.paths ?? {})) {
    for (const method of Object.keys(methods)) operations.add(`${method.toUpperCase()} ${route.replace(/\{[^}]+\}/g, '{}')}`);
  }
  return operations;
}

/** What this migration has written before (resumption): flags it imported may be rewritten. */
class State {
  constructor(file) {
    this.file = file;
    this.data = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { importedFlags: {}, pendingJobs: [] };
  }
  save() {
    mkdirSync(path.dirname(this.file), { recursive: true });
    writeFileSync(this.file, JSON.stringify(this.data), { mode: 0o600 });
  }
  ownsFlag(project, name) {
    return Boolean(this.data.importedFlags[`${project}/${name}`]);
  }
  markFlags(project, names) {
    for (const name of names) this.data.importedFlags[`${project}/${name}`] = true;
    this.save();
  }
}

export async function migrate({ source, target, options, log }) {
  const report = new Report(log);
  const { dryRun, overwrite, prefix } = options;
  const mine = (name) => !prefix || String(name ?? '').startsWith(prefix);
  const version = await read.detectVersion(source);
  log(`source: Unleash ${version.text}${version.enterprise ? ' (Enterprise)' : ''} at ${source.base}`);
  await read.checkAdmin(source, 'source');
  await read.checkAdmin(target, 'target');
  const offered = await targetOperations(target);
  const state = new State(options.stateFile);
  const write = async (kind, name, action) => {
    if (dryRun) return;
    try {
      await action();
    } catch (error) {
      report.fail(kind, name, error);
      throw error;
    }
  };
  // One failing object must not stop the others: its failure is in the report.
  const tryEach = async (kind, items, step) => {
    for (const item of items) {
      try {
        await step(item);
      } catch (error) {
        if (!report.failures.some((failure) => failure.kind === kind && failure.name === (item.name ?? item.id))) {
          report.fail(kind, item.name ?? item.id ?? '?', error);
        }
      }
    }
    report.progress(kind);
  };

  // Environments
  const environments = await read.readEnvironments(source);
  const ourEnvironments = new Map((await target.get('/api/admin/environments')).environments.map((e) => [e.name, e]));
  report.count('environments', 'read', environments.length);
  await tryEach('environments', environments, async (environment) => {
    const ours = ourEnvironments.get(environment.name);
    if (!ours) {
      report.count('environments', 'created');
      await write('environments', environment.name, () =>
        target.post('/api/admin/environments', {
          name: environment.name,
          type: environment.type,
          sortOrder: environment.sortOrder,
          enabled: environment.enabled,
        }),
      );
      return;
    }
    const theirs = { type: environment.type, enabled: environment.enabled, sortOrder: environment.sortOrder };
    const current = { type: ours.type, enabled: ours.enabled, sortOrder: ours.sortOrder };
    if (same(theirs, current)) return report.count('environments', 'unchanged');
    if (!overwrite) return report.conflict('environments', environment.name, { source: theirs, target: current });
    report.count('environments', 'updated');
    await write('environments', environment.name, async () => {
      if (ours.type !== environment.type || ours.sortOrder !== environment.sortOrder) {
        await target.send('PUT', `/api/admin/environments/update/${encodeURIComponent(environment.name)}`, {
          type: environment.type,
          sortOrder: environment.sortOrder,
        });
      }
      if (ours.enabled !== environment.enabled) {
        await target.post(`/api/admin/environments/${encodeURIComponent(environment.name)}/${environment.enabled ? 'on' : 'off'}`);
      }
    });
  });

  // Projects, their environments and default strategies
  const projects = await read.readProjects(source, version);
  const ourProjects = new Map((await target.get('/api/admin/projects')).projects.map((p) => [p.id, p]));
  report.count('projects', 'read', projects.length);
  await tryEach('projects', projects, async (project) => {
    const ours = ourProjects.get(project.id);
    const settings = {
      name: project.name,
      description: project.description ?? null,
      mode: project.mode,
      defaultStickiness: project.defaultStickiness,
    };
    if (!ours) {
      report.count('projects', 'created');
      await write('projects', project.id, () =>
        target.post('/api/admin/projects', { id: project.id, ...settings, environments: project.environments.map((e) => e.name) }),
      );
    } else {
      const detail = await target.get(`/api/admin/projects/${encodeURIComponent(project.id)}`);
      const current = {
        name: detail.name,
        description: detail.description ?? null,
        mode: detail.mode ?? 'open',
        defaultStickiness: detail.defaultStickiness ?? 'default',
      };
      const ourEnvironmentNames = new Set((detail.environments ?? []).map((e) => e.environment ?? e.name ?? e));
      const missing = project.environments.filter((e) => !ourEnvironmentNames.has(e.name));
      if (same(settings, current) && missing.length === 0) report.count('projects', 'unchanged');
      else if (!same(settings, current) && !overwrite) report.conflict('projects', project.id, { source: settings, target: current });
      else {
        report.count('projects', 'updated');
        await write('projects', project.id, async () => {
          if (!same(settings, current)) await target.send('PUT', `/api/admin/projects/${encodeURIComponent(project.id)}`, settings);
          for (const environment of missing) {
            await target.post(`/api/admin/projects/${encodeURIComponent(project.id)}/environments`, { environment: environment.name });
          }
        });
      }
    }
    for (const environment of project.environments) {
      if (!environment.defaultStrategy) continue;
      await write('projects', `${project.id}/${environment.name}`, () =>
        target.post(
          `/api/admin/projects/${encodeURIComponent(project.id)}/environments/${encodeURIComponent(environment.name)}/default-strategy`,
          environment.defaultStrategy,
        ),
      );
    }
  });

  // Context fields
  const contextFields = (await read.readContextFields(source)).filter((field) => mine(field.name));
  const ourFields = new Map((await target.get('/api/admin/context')).map((f) => [f.name, f]));
  report.count('context fields', 'read', contextFields.length);
  await tryEach('context fields', contextFields, async (field) => {
    const ours = ourFields.get(field.name);
    const body = {
      name: field.name,
      description: field.description,
      stickiness: field.stickiness,
      sortOrder: field.sortOrder,
      legalValues: field.legalValues,
    };
    if (!ours) {
      report.count('context fields', 'created');
      return write('context fields', field.name, () => target.post('/api/admin/context', body));
    }
    const current = {
      name: ours.name,
      description: ours.description ?? '',
      stickiness: Boolean(ours.stickiness),
      sortOrder: ours.sortOrder ?? 0,
      legalValues: (ours.legalValues ?? []).map(({ value, description }) => (description ? { value, description } : { value })),
    };
    if (same(body, current)) return report.count('context fields', 'unchanged');
    if (!overwrite) return report.conflict('context fields', field.name, { source: body, target: current });
    report.count('context fields', 'updated');
    return write('context fields', field.name, () => target.send('PUT', `/api/admin/context/${encodeURIComponent(field.name)}`, body));
  });

  // Segments (flags name them by id: the import maps ids by name)
  const segments = (await read.readSegments(source)).filter((segment) => mine(segment.name));
  const ourSegments = new Map((await target.get('/api/admin/segments')).segments.map((s) => [s.name, s]));
  report.count('segments', 'read', segments.length);
  const segmentBody = (segment) => ({
    name: segment.name,
    description: segment.description ?? null,
    constraints: segment.constraints.map((c) => normalisedConstraint(c)),
    ...(segment.project ? { project: segment.project } : {}),
  });
  await tryEach('segments', segments, async (segment) => {
    const ours = ourSegments.get(segment.name);
    const body = segmentBody(segment);
    if (!ours) {
      report.count('segments', 'created');
      return write('segments', segment.name, () => target.post('/api/admin/segments', body));
    }
    const current = segmentBody({ ...ours, project: ours.project ?? null });
    if (same(body, current)) return report.count('segments', 'unchanged');
    if (!overwrite) return report.conflict('segments', segment.name, { source: body, target: current });
    report.count('segments', 'updated');
    return write('segments', segment.name, () => target.send('PUT', `/api/admin/segments/${ours.id}`, body));
  });

  // Custom strategy definitions
  const strategies = (await read.readCustomStrategies(source)).filter((strategy) => mine(strategy.name));
  const ourStrategies = new Map((await target.get('/api/admin/strategies')).strategies.map((s) => [s.name, s]));
  report.count('strategies', 'read', strategies.length);
  await tryEach('strategies', strategies, async (strategy) => {
    const ours = ourStrategies.get(strategy.name);
    const body = {
      name: strategy.name,
      ...(strategy.title ? { title: strategy.title } : {}),
      description: strategy.description,
      parameters: strategy.parameters.map(({ name, type, description, required }) => ({
        name,
        type,
        description: description ?? '',
        required: Boolean(required),
      })),
    };
    if (!ours) {
      report.count('strategies', 'created');
      return write('strategies', strategy.name, async () => {
        await target.post('/api/admin/strategies', body);
        if (strategy.deprecated) await target.post(`/api/admin/strategies/${encodeURIComponent(strategy.name)}/deprecate`);
      });
    }
    const current = {
      name: ours.name,
      ...(ours.title ? { title: ours.title } : {}),
      description: ours.description ?? '',
      parameters: (ours.parameters ?? []).map(({ name, type, description, required }) => ({
        name,
        type,
        description: description ?? '',
        required: Boolean(required),
      })),
    };
    if (same(body, current)) return report.count('strategies', 'unchanged');
    if (!overwrite) return report.conflict('strategies', strategy.name, { source: body, target: current });
    report.count('strategies', 'updated');
    return write('strategies', strategy.name, () => target.send('PUT', `/api/admin/strategies/${encodeURIComponent(strategy.name)}`, body));
  });

  // Tag types
  const tagTypes = (await read.readTagTypes(source)).filter((tagType) => mine(tagType.name) || tagType.name === 'simple');
  const ourTagTypes = new Map((await target.get('/api/admin/tag-types')).tagTypes.map((t) => [t.name, t]));
  report.count('tag types', 'read', tagTypes.length);
  await tryEach('tag types', tagTypes, async (tagType) => {
    const ours = ourTagTypes.get(tagType.name);
    const body = { name: tagType.name, description: tagType.description, ...(tagType.icon ? { icon: tagType.icon } : {}) };
    if (!ours) {
      report.count('tag types', 'created');
      return write('tag types', tagType.name, () => target.post('/api/admin/tag-types', body));
    }
    const current = { name: ours.name, description: ours.description ?? '', ...(ours.icon ? { icon: ours.icon } : {}) };
    if (same(body, current)) return report.count('tag types', 'unchanged');
    if (!overwrite) return report.conflict('tag types', tagType.name, { source: body, target: current });
    report.count('tag types', 'updated');
    return write('tag types', tagType.name, () => target.send('PUT', `/api/admin/tag-types/${encodeURIComponent(tagType.name)}`, body));
  });

  // Flags: per project and environment, Unleash's export compared with ours, the difference imported
  await copyFlags({ source, target, projects, report, options, state, offered, mine, write });

  // Integrations
  const addons = (await read.readAddons(source)).filter((addon) => mine(addon.description));
  const ourAddons = (await target.get('/api/admin/addons')).addons;
  report.count('integrations', 'read', addons.length);
  await tryEach('integrations', addons, async (addon) => {
    const name = `${addon.provider} "${addon.description ?? ''}" (#${addon.id})`;
    const masked = Object.entries(addon.parameters ?? {})
      .filter(([, value]) => value === MASKED)
      .map(([key]) => key);
    const body = {
      provider: addon.provider,
      description: addon.description ?? '',
      enabled: addon.enabled,
      parameters: addon.parameters ?? {},
      events: addon.events ?? [],
      projects: addon.projects ?? [],
      environments: addon.environments ?? [],
    };
    const match = ourAddons.find((ours) => ours.provider === addon.provider && (ours.description ?? '') === body.description);
    if (masked.length > 0) {
      if (match) return report.count('integrations', 'unchanged');
      return report.cannotCopy(
        'integrations',
        name,
        `the source masks its secret parameters (${masked.join(', ')})`,
        `create it in our admin UI (Integrations) with the same events, projects and environments and re-enter ${masked.join(', ')}`,
      );
    }
    if (!match) {
      report.count('integrations', 'created');
      return write('integrations', name, () => target.post('/api/admin/addons', body));
    }
    const current = {
      provider: match.provider,
      description: match.description ?? '',
      enabled: match.enabled,
      parameters: match.parameters ?? {},
      events: match.events ?? [],
      projects: match.projects ?? [],
      environments: match.environments ?? [],
    };
    if (same(body, current)) return report.count('integrations', 'unchanged');
    if (!overwrite) return report.conflict('integrations', name, { source: body, target: current });
    report.count('integrations', 'updated');
    return write('integrations', name, () => target.send('PUT', `/api/admin/addons/${match.id}`, body));
  });

  // Custom roles (Enterprise only on the source side)
  const roles = await read.readCustomRoles(source);
  if (roles === null) {
    log('  custom roles        the source offers none (Unleash OSS): nothing to copy');
  } else {
    report.count('custom roles', 'read', roles.length);
    for (const role of roles.filter((r) => mine(r.name))) {
      report.cannotCopy(
        'custom roles',
        role.name,
        'custom roles of an Enterprise source are not copied by this version',
        'create the role in our admin UI (Roles) with the same permissions',
      );
    }
    report.progress('custom roles');
  }

  // Users (no password can be read: each new user gets a reset link, written to a 0600 file)
  await copyUsers({ source, target, report, options, mine, write, log });

  // Project access (Enterprise only on the source side)
  let accessOffered = false;
  for (const project of projects) {
    const access = await read.readProjectAccess(source, project.id);
    if (access === null) continue;
    accessOffered = true;
    report.cannotCopy(
      'project access',
      project.id,
      'project access of an Enterprise source is not copied by this version',
      "grant the same users and roles in the project's Access page",
    );
  }
  if (!accessOffered) log('  project access      the source offers none (Unleash OSS): nothing to copy');

  // API tokens, secrets unchanged
  await copyTokens({ source, target, report, options, mine, write });

  report.notCopyable.push({
    kind: 'personal access tokens',
    name: '(all)',
    reason: 'Unleash never shows a personal access token again after creation',
    action: 'each person creates a new one in their profile',
  });
  report.notCopyable.push({
    kind: 'passwords',
    name: '(all)',
    reason: 'Unleash stores only password hashes',
    action: 'each person uses the reset link in the links file, or signs in with SSO',
  });
  return report;
}

function normalisedConstraint(constraint) {
  const result = { contextName: constraint.contextName, operator: constraint.operator };
  if (constraint.values !== undefined) result.values = constraint.values;
  if (constraint.value !== undefined && constraint.value !== null && constraint.value !== '') result.value = constraint.value;
  result.inverted = Boolean(constraint.inverted);
  result.caseInsensitive = Boolean(constraint.caseInsensitive);
  return result;
}

async function copyFlags({ source, target, projects, report, options, state, offered, mine, write }) {
  const { overwrite, dryRun } = options;
  const linkOperation = offered.has('POST /api/admin/projects/{}/features/{}/link');
  await waitForPendingJobs(target, state);
  for (const project of projects) {
    const names = (await read.readFlagNames(source, project.id, options.prefix)).filter(({ name }) => mine(name));
    report.count('flags', 'read', names.length);
    if (names.length === 0) continue;
    // Archived on both sides: done (our export leaves archived flags out, as Unleash's UI does).
    const ourArchived = new Set(
      (
        await target.get(`/api/admin/search/features?project=IS:${encodeURIComponent(project.id)}&archived=IS:true&limit=100000`)
      ).features.map((feature) => feature.name),
    );
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
        read.exportFlags(target, flagNames, environment.name),
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
        // In the report already; the other environments and projects still go.
      }
    }
    // Archived as archived: imported like the others, then archived here.
    const archived = names.filter((flag) => flag.archived && outcome.get(flag.name) !== 'conflict').map((flag) => flag.name);
    if (archived.length > 0 && !dryRun) {
      const toArchive = archived.filter((name) => !ourArchived.has(name));
      if (toArchive.length > 0) {
        await write('flags', `${project.id} (archive)`, () =>
          target.post(`/api/admin/projects/${encodeURIComponent(project.id)}/archive`, { features: toArchive }),
        );
      }
    }
    for (const [, result] of outcome) if (result !== 'conflict') report.count('flags', result);
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
            report.count('flag links', 'created');
            await write('flag links', `${project.id}/${name}`, () =>
              target.post(`${base}/link`, { url: link.url, ...(link.title ? { title: link.title } : {}) }),
            );
          }
        }
      }
    }
  }
  report.progress('flags');
  if (report.kinds.has('flag links')) report.progress('flag links');
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

async function copyUsers({ source, target, report, options, mine, write, log }) {
  const sourceAnswer = await source.get('/api/admin/user-admin');
  const users = (await read.readUsers(source)).filter((user) => mine(user.username ?? user.email));
  const sourceRoleNames = new Map((sourceAnswer.rootRoles ?? []).map((role) => [role.id, role.name]));
  const ourAnswer = await target.get('/api/admin/user-admin');
  const ourRoleIds = new Map((ourAnswer.rootRoles ?? []).map((role) => [role.name, role.id]));
  const key = (user) => (user.email ? `e:${user.email.toLowerCase()}` : `u:${user.username}`);
  const ours = new Map();
  for (const user of ourAnswer.users) {
    if (user.email) ours.set(`e:${user.email.toLowerCase()}`, user);
    if (user.username) ours.set(`u:${user.username}`, user);
  }
  report.count('users', 'read', users.length);
  let linksFile = null;
  for (const user of users) {
    const name = user.username ?? user.email;
    try {
      const roleName = sourceRoleNames.get(user.rootRole);
      const rootRole = roleName ? ourRoleIds.get(roleName) : undefined;
      if (rootRole === undefined) {
        report.cannotCopy(
          'users',
          name,
          `root role ${roleName ?? user.rootRole} does not exist here`,
          'create the role, then re-run the migration',
        );
        continue;
      }
      const existing = ours.get(key(user)) ?? (user.username ? ours.get(`u:${user.username}`) : undefined);
      const wanted = { name: user.name ?? null, email: user.email ?? null, rootRole };
      if (existing) {
        const current = { name: existing.name ?? null, email: existing.email ?? null, rootRole: existing.rootRole };
        if (same(wanted, current)) report.count('users', 'unchanged');
        else if (!options.overwrite) report.conflict('users', name, { source: wanted, target: current });
        else {
          report.count('users', 'updated');
          await write('users', name, () =>
            target.send('PUT', `/api/admin/user-admin/${existing.id}`, {
              ...(user.name ? { name: user.name } : {}),
              ...(user.email ? { email: user.email } : {}),
              rootRole,
            }),
          );
        }
        continue;
      }
      report.count('users', 'created');
      await write('users', name, async () => {
        await target.post('/api/admin/user-admin', {
          ...(user.username ? { username: user.username } : {}),
          ...(user.email ? { email: user.email } : {}),
          ...(user.name ? { name: user.name } : {}),
          rootRole,
          sendEmail: false,
        });
        if (!user.email) {
          report.cannotCopy(
            'user passwords',
            name,
            'no email: no reset link can be made',
            'set a password for this user in the admin UI, or let them sign in with SSO',
          );
          return;
        }
        const { resetPasswordUrl } = await target.post('/api/admin/user-admin/reset-password', { id: user.email });
        linksFile ??= openLinksFile(options.linksFile);
        writeSync(linksFile, `${user.email}\t${resetPasswordUrl}\n`);
      });
    } catch (error) {
      if (!report.failures.some((failure) => failure.name === name)) report.fail('users', name, error);
    }
  }
  if (linksFile !== null) {
    closeSync(linksFile);
    log(`  reset links for new users written to ${options.linksFile} (mode 0600; hand each link to its owner)`);
  }
  report.progress('users');
}

function openLinksFile(file) {
  mkdirSync(path.dirname(file), { recursive: true });
  // 0600 from the first byte: created with that mode, never widened.
  return openSync(file, 'a', 0o600);
}

async function copyTokens({ source, target, report, options, mine, write }) {
  const tokens = (await read.readApiTokens(source)).filter((token) => mine(token.tokenName ?? token.username));
  report.count('api tokens', 'read', tokens.length);
  const ourTokens = (await target.get('/api/admin/api-tokens')).tokens;
  for (const token of tokens) {
    const name = token.tokenName ?? token.username;
    try {
      const type = String(token.type).toLowerCase();
      if (token.secure === true || /\.v2_/.test(token.secret ?? '') || !token.secret || token.secret.includes('*')) {
        report.cannotCopy(
          'api tokens',
          `${name} (${type}, ${token.environment})`,
          "the source keeps only this token's hash (Unleash 8.1+ v2 token)",
          'issue a new token here and give it to the services that use this one',
        );
        continue;
      }
      const wanted = {
        type,
        environment: token.environment,
        projects: [...(token.projects ?? [token.project])].sort(),
        expiresAt: token.expiresAt ?? null,
      };
      // Found by the listed handle (`<scope>:<env>.<6 hex>***<id>`) and name: the secret itself
      // never travels in a URL, where logs could keep it. A secret taken by another token answers 409 below.
      const existing =
        ourTokens.find((listed) => listed.secret.startsWith(`${secretPrefix(token.secret)}***`) && listed.tokenName === name) ?? null;
      const body = {
        secret: token.secret,
        tokenName: name,
        type,
        environment: token.environment,
        ...(type === 'admin' ? {} : { projects: token.projects ?? [token.project] }),
        ...(token.expiresAt ? { expiresAt: token.expiresAt } : {}),
      };
      if (existing) {
        const current = {
          type: existing.type,
          environment: existing.environment,
          projects: [...existing.projects].sort(),
          expiresAt: existing.expiresAt ?? null,
        };
        if (same(wanted, current)) {
          report.count('api tokens', 'unchanged');
          continue;
        }
        if (!options.overwrite) {
          report.conflict('api tokens', name, { source: wanted, target: current });
          continue;
        }
        report.count('api tokens', 'updated');
        await write('api tokens', name, async () => {
          await target.send('DELETE', `/api/admin/api-tokens/${existing.id}`);
          await target.post('/api/admin/api-tokens/import', body);
        });
        continue;
      }
      if (options.dryRun) {
        report.count('api tokens', 'created');
        continue;
      }
      const created = await target.send('POST', '/api/admin/api-tokens/import', body, { allowed: [409] });
      if (created.status === 409) report.conflict('api tokens', name, 'a token with this secret exists here under another name');
      else report.count('api tokens', 'created');
    } catch (error) {
      if (!report.failures.some((failure) => failure.name === name)) report.fail('api tokens', name, error);
    }
  }
  report.progress('api tokens');
}
