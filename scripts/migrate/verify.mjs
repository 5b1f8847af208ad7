// Proof before the switch: for every copied client and frontend token, the source and our
// Worker must answer the SDK APIs alike (normalised: order, defaults, ids).
import { normalConstraint } from './flags.mjs';
import { detectVersion, readApiTokens, readEnvironments } from './source.mjs';
import { compareChangeRequestConfigs } from './copy-governance.mjs';
import { readableSecret } from './copy-people.mjs';

/** A small deterministic generator, so a difference found once is found again. */
function seeded(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random contexts built from the values the flags themselves test, plus random ids. */
function randomContexts(features, count, seed = 42) {
  const random = seeded(seed);
  const values = new Map();
  // Fields a rollout or a variant sticks to always get a value: without one, Unleash picks at random.
  const sticky = new Set();
  for (const feature of features) {
    for (const variant of feature.variants ?? []) if (variant.stickiness) sticky.add(variant.stickiness);
    for (const strategy of feature.strategies ?? []) {
      if (strategy.parameters?.stickiness) sticky.add(strategy.parameters.stickiness);
      for (const variant of strategy.variants ?? []) if (variant.stickiness) sticky.add(variant.stickiness);
      for (const constraint of strategy.constraints ?? []) {
        const list = values.get(constraint.contextName) ?? [];
        list.push(...(constraint.values ?? []), ...(constraint.value ? [constraint.value] : []));
        values.set(constraint.contextName, list);
      }
      for (const id of String(strategy.parameters?.userIds ?? '').split(','))
        if (id.trim()) (values.get('userId') ?? values.set('userId', []).get('userId')).push(id.trim());
    }
  }
  const pick = (list) => list[Math.floor(random() * list.length)];
  const contexts = [];
  for (let i = 0; i < count; i++) {
    const context = {
      userId: random() < 0.5 && values.has('userId') ? pick(values.get('userId')) : `user-${Math.floor(random() * 100000)}`,
      sessionId: `s-${Math.floor(random() * 100000)}`,
    };
    const properties = {};
    for (const name of [...sticky].sort()) {
      if (['default', 'random', 'userId', 'sessionId', 'remoteAddress'].includes(name)) continue;
      properties[name] = `${name}-${Math.floor(random() * 100000)}`;
    }
    for (const [name, list] of values) {
      if (
        ['userId', 'sessionId', 'currentTime', 'environment', 'appName', 'remoteAddress'].includes(name) ||
        list.length === 0 ||
        random() < 0.3
      )
        continue;
      properties[name] = pick(list);
    }
    if (Object.keys(properties).length > 0) context.properties = properties;
    contexts.push(context);
  }
  return contexts;
}

/** Constraints in one order: all of them must hold, so their order means nothing. */
function sortedConstraints(constraints) {
  return constraints
    .map(normalConstraint)
    .map((constraint) => ({ ...constraint, values: [...constraint.values].sort() }))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

function normalVariant(variant) {
  return {
    name: variant.name,
    weight: variant.weight,
    weightType: variant.weightType ?? 'variable',
    stickiness: variant.stickiness ?? 'default',
    payload: variant.payload ? { type: variant.payload.type, value: variant.payload.value } : null,
    overrides: (variant.overrides ?? []).map(({ contextName, values }) => ({ contextName, values })),
  };
}

/** `/api/client/features` in a comparable form: sorted by name, segment ids replaced by their constraints. */
function normalClientFeatures(answer) {
  const segments = new Map((answer.segments ?? []).map((segment) => [segment.id, sortedConstraints(segment.constraints)]));
  return (answer.features ?? [])
    .map((feature) => ({
      name: feature.name,
      type: feature.type,
      enabled: feature.enabled,
      stale: Boolean(feature.stale),
      impressionData: Boolean(feature.impressionData),
      project: feature.project,
      strategies: (feature.strategies ?? []).map((strategy) => ({
        name: strategy.name,
        parameters: Object.fromEntries(Object.entries(strategy.parameters ?? {}).sort(([a], [b]) => a.localeCompare(b))),
        constraints: sortedConstraints(strategy.constraints ?? []),
        segments: (strategy.segments ?? [])
          .map((id) => segments.get(id) ?? `#${id}`)
          .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
        variants: (strategy.variants ?? []).map(normalVariant),
      })),
      variants: (feature.variants ?? []).map(normalVariant),
      // 6.10.1 lists a dependency once per environment it joins: each counts once.
      dependencies: [
        ...new Set(
          (feature.dependencies ?? []).map((d) =>
            JSON.stringify({ feature: d.feature, enabled: d.enabled !== false, variants: [...(d.variants ?? [])].sort() }),
          ),
        ),
      ]
        .sort()
        .map((text) => JSON.parse(text)),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

function normalToggles(answer) {
  return (answer.toggles ?? [])
    .map((toggle) => ({
      name: toggle.name,
      enabled: toggle.enabled,
      impressionData: Boolean(toggle.impressionData),
      variant: { name: toggle.variant?.name, enabled: Boolean(toggle.variant?.enabled), payload: toggle.variant?.payload ?? null },
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The differences between two lists of named things, one line each. */
function differences(label, source, ours) {
  const lines = [];
  const byName = (list) => new Map(list.map((item) => [item.name, item]));
  const theirs = byName(source);
  const mine = byName(ours);
  for (const [name, item] of theirs) {
    if (!mine.has(name)) lines.push(`${label}: ${name} is missing here`);
    else if (JSON.stringify(item) !== JSON.stringify(mine.get(name))) {
      lines.push(`${label}: ${name} differs\n    source: ${JSON.stringify(item)}\n    ours:   ${JSON.stringify(mine.get(name))}`);
    }
  }
  for (const name of mine.keys()) if (!theirs.has(name)) lines.push(`${label}: ${name} is here but not on the source`);
  return lines;
}

/**
 * Every SDK token of the source (client, backend, frontend) is compared, or the run says why
 * not: a secret the source does not show (a v2 token: give it with --keys), one refused here,
 * or one the run was told to leave out (--leave-out).
 */
export async function verify({ source, target, options, log }) {
  const mine = (name) => !options.prefix || String(name ?? '').startsWith(options.prefix);
  const sdkTokens = (await readApiTokens(source)).filter(
    (token) => mine(token.tokenName ?? token.username) && ['client', 'backend', 'frontend'].includes(String(token.type).toLowerCase()),
  );
  const keys = options.keys ?? new Map();
  const leftOut = new Set(options.leaveOut ?? []);
  const notCompared = [];
  const tokens = [];
  for (const token of sdkTokens) {
    const name = token.tokenName ?? token.username;
    if (leftOut.has(name)) continue;
    const secret = readableSecret(token) ? token.secret : keys.get(token.secret);
    if (!secret) notCompared.push(`${name}: the source does not show its secret (a v2 token: give it with --keys)`);
    else tokens.push({ ...token, secret });
  }
  // Client tokens first: their flags give the frontend comparisons their contexts.
  tokens.sort((a, b) => Number(String(a.type).toLowerCase() === 'frontend') - Number(String(b.type).toLowerCase() === 'frontend'));
  const lines = [];
  let comparisons = 0;
  for (const token of tokens) {
    const name = token.tokenName ?? token.username;
    const type = String(token.type).toLowerCase();
    const asToken = { auth: token.secret, allowed: [401, 403, 404] };
    if (type === 'frontend') {
      const contexts = randomContexts(options.contextFeatures ?? [], options.contexts ?? 25, options.seed ?? 42);
      for (const context of contexts) {
        const [theirs, ours] = await Promise.all([
          source.send('POST', '/api/frontend', { context }, asToken),
          target.send('POST', '/api/frontend', { context }, asToken),
        ]);
        comparisons++;
        if (theirs.status !== 200 || ours.status !== 200) {
          lines.push(`frontend token ${name}: status ${theirs.status} (source) vs ${ours.status} (ours)`);
          notCompared.push(`${name}: answered ${theirs.status} by the source, ${ours.status} here`);
          break;
        }
        const found = differences(
          `frontend token ${name}, context ${JSON.stringify(context)}`,
          normalToggles(theirs.body).filter((toggle) => mine(toggle.name)),
          normalToggles(ours.body).filter((toggle) => mine(toggle.name)),
        );
        lines.push(...found);
      }
      continue;
    }
    const [theirs, ours] = await Promise.all([
      source.send('GET', '/api/client/features', undefined, asToken),
      target.send('GET', '/api/client/features', undefined, asToken),
    ]);
    comparisons++;
    if (theirs.status !== 200 || ours.status !== 200) {
      lines.push(`client token ${name}: status ${theirs.status} (source) vs ${ours.status} (ours)`);
      notCompared.push(`${name}: answered ${theirs.status} by the source, ${ours.status} here`);
      continue;
    }
    const sourceFeatures = normalClientFeatures(theirs.body).filter((feature) => mine(feature.name));
    const ourFeatures = normalClientFeatures(ours.body).filter((feature) => mine(feature.name));
    options.contextFeatures ??= theirs.body.features;
    lines.push(...differences(`client token ${name}`, sourceFeatures, ourFeatures));
  }
  // An Enterprise source's change-request settings (predefined per environment, and per project).
  const version = await detectVersion(source);
  if (version.enterprise) {
    const projectIds = (await source.get('/api/admin/projects')).projects.filter((p) => !p.archivedAt).map((p) => p.id);
    lines.push(...(await compareChangeRequestConfigs(source, target, version, await readEnvironments(source), projectIds)));
  }
  for (const line of lines) log(line);
  for (const line of notCompared) log(`not compared: ${line}`);
  const compared =
    tokens.length - new Set(notCompared.filter((line) => tokens.some((t) => line.startsWith(`${t.tokenName ?? t.username}:`)))).size;
  log(
    `compared ${compared} of ${sdkTokens.length} SDK tokens of the source${leftOut.size > 0 ? ` (${leftOut.size} left out as asked)` : ''}`,
  );
  log(`verify: ${tokens.length} token(s), ${comparisons} comparison(s), ${lines.length} difference(s)`);
  return { tokens: tokens.length, compared, total: sdkTokens.length, leftOut: [...leftOut], notCompared, comparisons, differences: lines };
}
