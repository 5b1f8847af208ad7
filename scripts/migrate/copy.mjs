// The copy, one kind of object after another, in the order their references need:
// environments, projects, context fields, segments, strategies, tag types, flags, integrations,
// roles, users, project access, API tokens. Each step compares before it writes, so a second
// run writes nothing and an interrupted one picks up where it stopped.
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import * as read from './source.mjs';
import { copyFlags } from './copy-flags.mjs';
import { copyTokens, copyUsers } from './copy-people.mjs';
import { copyChangeRequestConfigs } from './copy-governance.mjs';
import { same } from './flags.mjs';

const MASKED = '*****';

/** Counts per kind, the not-copyable list and the conflicts: what the run prints at the end. */
class Report {
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

/**
 * Which operations our Worker offers, from its own OpenAPI document; and the check, before
 * anything is written, that the target is this service: a real Unleash (or anything else)
 * given as `--to` has another document and no token import, and gets nothing.
 */
async function targetOperations(target) {
  const answer = await target.send('GET', '/docs/openapi.json', undefined, { allowed: [401, 403, 404] });
  const document = answer.status === 200 && answer.body && typeof answer.body === 'object' ? answer.body : {};
  const importsTokens = Boolean(document.paths?.['/api/admin/api-tokens/import']?.post);
  if (document.info?.title !== 'Unleash on Cloudflare Workers' || !importsTokens) {
    const title = document.info?.title
      ? `"${document.info.title}" ${document.info.version ?? ''}`.trim()
      : `no OpenAPI document (${answer.status})`;
    throw new Error(
      `target: ${target.base} is not this service (its /docs/openapi.json shows ${title}, without POST /api/admin/api-tokens/import). --to must be the Worker; nothing was written`,
    );
  }
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
  const offered = await targetOperations(target);
  await read.checkAdmin(source, 'source');
  await read.checkAdmin(target, 'target');
  const state = new State(options.stateFile);
  // Counted once written (a dry run counts what it would write): the summary is what happened.
  const write = async (kind, name, action, outcome) => {
    if (!dryRun) {
      try {
        await action();
      } catch (error) {
        report.fail(kind, name, error);
        throw error;
      }
    }
    if (outcome) report.count(kind, outcome);
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
      await write('environments', environment.name, () =>
        target.post('/api/admin/environments', {
          name: environment.name,
          type: environment.type,
          sortOrder: environment.sortOrder,
          enabled: environment.enabled,
          ...(environment.requiredApprovals === null ? {} : { requiredApprovals: environment.requiredApprovals }),
        }),
      );
      report.count('environments', 'created');
      return;
    }
    // Predefined approvals are compared only where the source has them (an OSS source never does).
    const approvals = (value) => (environment.requiredApprovals === null ? {} : { requiredApprovals: value ?? null });
    const theirs = {
      type: environment.type,
      enabled: environment.enabled,
      sortOrder: environment.sortOrder,
      ...approvals(environment.requiredApprovals),
    };
    const current = { type: ours.type, enabled: ours.enabled, sortOrder: ours.sortOrder, ...approvals(ours.requiredApprovals) };
    if (same(theirs, current)) return report.count('environments', 'unchanged');
    if (!overwrite) return report.conflict('environments', environment.name, { source: theirs, target: current });
    await write('environments', environment.name, async () => {
      if (
        !same(
          { type: theirs.type, sortOrder: theirs.sortOrder, ...approvals(theirs.requiredApprovals) },
          { type: current.type, sortOrder: current.sortOrder, ...approvals(current.requiredApprovals) },
        )
      ) {
        await target.send('PUT', `/api/admin/environments/update/${encodeURIComponent(environment.name)}`, {
          type: environment.type,
          sortOrder: environment.sortOrder,
          ...approvals(environment.requiredApprovals),
        });
      }
      if (ours.enabled !== environment.enabled) {
        await target.post(`/api/admin/environments/${encodeURIComponent(environment.name)}/${environment.enabled ? 'on' : 'off'}`);
      }
    });
    report.count('environments', 'updated');
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
    let ourDefaults = new Map();
    if (!ours) {
      await write('projects', project.id, () =>
        target.post('/api/admin/projects', { id: project.id, ...settings, environments: project.environments.map((e) => e.name) }),
      );
      report.count('projects', 'created');
    } else {
      const detail = await target.get(`/api/admin/projects/${encodeURIComponent(project.id)}`);
      const current = {
        name: detail.name,
        description: detail.description ?? null,
        mode: detail.mode ?? 'open',
        defaultStickiness: detail.defaultStickiness ?? 'default',
      };
      const ourEnvironmentNames = new Set((detail.environments ?? []).map((e) => e.environment ?? e.name ?? e));
      ourDefaults = new Map((detail.environments ?? []).map((e) => [e.environment ?? e.name ?? e, e.defaultStrategy ?? null]));
      const missing = project.environments.filter((e) => !ourEnvironmentNames.has(e.name));
      if (same(settings, current) && missing.length === 0) report.count('projects', 'unchanged');
      else if (!same(settings, current) && !overwrite) report.conflict('projects', project.id, { source: settings, target: current });
      else {
        await write('projects', project.id, async () => {
          if (!same(settings, current)) await target.send('PUT', `/api/admin/projects/${encodeURIComponent(project.id)}`, settings);
          for (const environment of missing) {
            await target.post(`/api/admin/projects/${encodeURIComponent(project.id)}/environments`, { environment: environment.name });
          }
        });
        report.count('projects', 'updated');
      }
    }
    // A project default strategy is posted only where ours differs: a second run writes no event.
    for (const environment of project.environments) {
      if (!environment.defaultStrategy) continue;
      if (sameStrategy(environment.defaultStrategy, ourDefaults.get(environment.name))) continue;
      await write('projects', `${project.id}/${environment.name}`, () =>
        target.post(
          `/api/admin/projects/${encodeURIComponent(project.id)}/environments/${encodeURIComponent(environment.name)}/default-strategy`,
          environment.defaultStrategy,
        ),
      );
    }
  });

  await copyChangeRequestConfigs({ source, target, version, projects, report, write, tryEach, overwrite });

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
      return write('context fields', field.name, () => target.post('/api/admin/context', body), 'created');
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
    return write(
      'context fields',
      field.name,
      () => target.send('PUT', `/api/admin/context/${encodeURIComponent(field.name)}`, body),
      'updated',
    );
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
      return write('segments', segment.name, () => target.post('/api/admin/segments', body), 'created');
    }
    const current = segmentBody({ ...ours, project: ours.project ?? null });
    if (same(body, current)) return report.count('segments', 'unchanged');
    if (!overwrite) return report.conflict('segments', segment.name, { source: body, target: current });
    return write('segments', segment.name, () => target.send('PUT', `/api/admin/segments/${ours.id}`, body), 'updated');
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
      return write(
        'strategies',
        strategy.name,
        async () => {
          await target.post('/api/admin/strategies', body);
          if (strategy.deprecated) await target.post(`/api/admin/strategies/${encodeURIComponent(strategy.name)}/deprecate`);
        },
        'created',
      );
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
    return write(
      'strategies',
      strategy.name,
      () => target.send('PUT', `/api/admin/strategies/${encodeURIComponent(strategy.name)}`, body),
      'updated',
    );
  });

  // Tag types
  const tagTypes = (await read.readTagTypes(source)).filter((tagType) => mine(tagType.name) || tagType.name === 'simple');
  const ourTagTypes = new Map((await target.get('/api/admin/tag-types')).tagTypes.map((t) => [t.name, t]));
  report.count('tag types', 'read', tagTypes.length);
  await tryEach('tag types', tagTypes, async (tagType) => {
    const ours = ourTagTypes.get(tagType.name);
    const body = { name: tagType.name, description: tagType.description, ...(tagType.icon ? { icon: tagType.icon } : {}) };
    if (!ours) {
      return write('tag types', tagType.name, () => target.post('/api/admin/tag-types', body), 'created');
    }
    const current = { name: ours.name, description: ours.description ?? '', ...(ours.icon ? { icon: ours.icon } : {}) };
    if (same(body, current)) return report.count('tag types', 'unchanged');
    if (!overwrite) return report.conflict('tag types', tagType.name, { source: body, target: current });
    return write(
      'tag types',
      tagType.name,
      () => target.send('PUT', `/api/admin/tag-types/${encodeURIComponent(tagType.name)}`, body),
      'updated',
    );
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
      return write('integrations', name, () => target.post('/api/admin/addons', body), 'created');
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
    return write('integrations', name, () => target.send('PUT', `/api/admin/addons/${match.id}`, body), 'updated');
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

/** Two project default strategies alike (ours may answer defaults the source leaves out). */
function sameStrategy(theirs, ours) {
  if (!ours) return false;
  const normal = (strategy) => ({
    name: strategy.name,
    title: strategy.title || null,
    disabled: Boolean(strategy.disabled),
    parameters: Object.fromEntries(
      Object.entries(strategy.parameters ?? {})
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, value]) => [key, String(value)]),
    ),
    constraints: (strategy.constraints ?? []).map((constraint) => normalisedConstraint(constraint)),
    variants: (strategy.variants ?? []).map(({ name, weight, weightType, stickiness }) => ({ name, weight, weightType, stickiness })),
    segments: [...(strategy.segments ?? [])].sort(),
  });
  return same(normal(theirs), normal(ours));
}
