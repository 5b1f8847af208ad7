// Admin-API benches that time this checkout, another commit (`--against <commit>`) and a real
// Unleash in one run (bench/search, bench/import): the three take turns round by round on the
// same data, so the shared machine's load falls on all of them alike.
//
// Unleash is the one at UNLEASH_URL (admin token UNLEASH_ADMIN_TOKEN, UI sign-in UNLEASH_USER /
// UNLEASH_PASSWORD: Unleash refuses imports from admin tokens). There is no default: these
// benches load thousands of flags, so point it at a private copy of the 6.10.1 oracle
// (`cp -a` of its folder, run with its own ORACLE6_PORT and ORACLE6_DB_NAME), never at a
// shared one. Without it the builds are compared alone.
import { readFileSync, writeFileSync } from 'node:fs';
import { againstArgument, checkoutAgainst } from './against.mjs';
import { fmt, median, percentile } from './lib.mjs';
import { adminClient, must, unleashSessionClient } from './sdk/dataset.mjs';
import { listenerPid, processCpuMs, startProjectWorker } from './sdk/miniflare.mjs';

/**
 * Starts this checkout on `port` and, with `--against`, that commit on `port + 1` (both served
 * by Miniflare as bench/sdk serves them), and finds Unleash. Answers `{ systems, label, stop() }`;
 * each system has `{ name, base, admin(method, path, body), importer, cpuMs() }`.
 */
export async function startSystems(port) {
  const against = againstArgument();
  const systems = {};
  const build = against ? checkoutAgainst(against) : undefined;
  const stops = [];
  try {
    const ours = await startProjectWorker({ port });
    stops.push(() => ours.stop());
    systems.ours = { name: 'this build', base: ours.base, admin: adminClient(ours.base, ours.token), cpuMs: ours.cpuMs };
    if (build) {
      const previous = await startProjectWorker({ port: port + 1, root: build.root });
      stops.push(() => previous.stop());
      systems.previous = {
        name: build.label,
        base: previous.base,
        admin: adminClient(previous.base, previous.token),
        cpuMs: previous.cpuMs,
      };
    }
    const unleash = process.env.UNLEASH_URL;
    if (unleash) {
      const up = await fetch(`${unleash}/health`, { signal: AbortSignal.timeout(5000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (!up) throw new Error(`UNLEASH_URL ${unleash} does not answer /health`);
      const pid = listenerPid(new URL(unleash).port);
      systems.unleash = {
        name: 'Unleash 6.10.1',
        base: unleash,
        admin: adminClient(unleash, process.env.UNLEASH_ADMIN_TOKEN ?? '*:*.unleash6-admin-token'),
        importer: await unleashSessionClient(unleash, process.env.UNLEASH_USER ?? 'admin', process.env.UNLEASH_PASSWORD ?? 'unleash4all'),
        cpuMs: () => processCpuMs(pid),
      };
    } else console.log('UNLEASH_URL is not set: measuring the builds without Unleash');
  } catch (error) {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    build?.remove();
    throw error;
  }
  for (const system of Object.values(systems)) system.importer ??= system.admin;
  return {
    systems,
    build,
    async stop() {
      for (const stop of stops.reverse()) await stop().catch(() => {});
      build?.remove();
    },
  };
}

/** `names` rotated by `k`: who goes first moves on every turn. */
export const rotated = (names, k) => names.map((_, i) => names[(i + k) % names.length]);

/** Lowest–highest of a list of ratios. */
const spread = (values) => (values.length > 0 ? `${fmt(Math.min(...values), 2)}–${fmt(Math.max(...values), 2)}` : 'n/a');

/** The median of round-by-round ratios and their spread, as "**1.23x** (1.01–1.40)". */
export const ratioText = (values) => (values.length > 0 ? `**${fmt(median(values), 2)}x** (${spread(values)})` : '—');

export const p50 = (samples) =>
  percentile(
    [...samples].sort((a, b) => a - b),
    50,
  );
export const p95 = (samples) =>
  percentile(
    [...samples].sort((a, b) => a - b),
    95,
  );

/** Imports a payload of the shape bench/import/generate.mjs makes, answered 200 or 202 (then waits for its job). */
export async function importBody(system, body) {
  const t0 = performance.now();
  const response = await must(await system.importer('POST', '/api/admin/features-batch/import', body), 200, 202);
  if (response.status === 202) {
    const location = response.headers.get('location');
    await response.arrayBuffer();
    for (;;) {
      const job = await (await system.admin('GET', location)).json();
      if (job.status === 'completed') break;
      if (job.status === 'failed') throw new Error(`${system.name}: import job failed: ${JSON.stringify(job.errors)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } else await response.arrayBuffer();
  return performance.now() - t0;
}

/** Where a bench's side-by-side section ends in its RESULTS.md: what follows is the rest of the file. */
const SIDE_BY_SIDE_MARKER = '<!-- the part above is written by `npm run bench -- <area> --against <commit>` -->';
/** Where the readings written by hand begin: no run rewrites what follows it. */
const BY_HAND_MARKER = '<!-- written by hand: no bench run rewrites what follows -->';

/**
 * Writes the part of `file` above SIDE_BY_SIDE_MARKER ('above') or below it ('below'), keeping
 * the other, and keeping what follows BY_HAND_MARKER (the readings of earlier runs) as it is.
 */
export function writeResultsPart(file, part, text) {
  let existing = '';
  try {
    existing = readFileSync(file, 'utf8');
  } catch {
    // a new file
  }
  const handAt = existing.indexOf(BY_HAND_MARKER);
  const byHand = handAt < 0 ? '' : existing.slice(handAt + BY_HAND_MARKER.length).trim();
  const generated = handAt < 0 ? existing : existing.slice(0, handAt);
  const at = generated.indexOf(SIDE_BY_SIDE_MARKER);
  const above = at < 0 ? '' : generated.slice(0, at).trimEnd();
  const below = at < 0 ? generated : generated.slice(at + SIDE_BY_SIDE_MARKER.length).trimStart();
  const [first, second] = part === 'above' ? [text.trimEnd(), below] : [above, text.trimEnd()];
  const hand = byHand ? `\n${BY_HAND_MARKER}\n\n${byHand}\n` : '';
  writeFileSync(file, `${first ? `${first}\n\n` : ''}${SIDE_BY_SIDE_MARKER}\n\n${second.trimEnd()}\n${hand}`);
}
