#!/usr/bin/env node
// npm run migrate -- --from <unleash url> --from-token <admin token or PAT> --to <our url> --to-token <our admin key>
//   [--dry-run] [--overwrite] [--verify] [--prefix <name prefix>] [--links-file <path>] [--state-file <path>] [--report <path>]
//   [--from-db <source PostgreSQL URL, read only>] [--keys <file of v2 secrets, for --verify>] [--leave-out <token names, for --verify>]
// See docs/migrate.md.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { migrate } from './copy.mjs';
import { endpoint } from './http.mjs';
import { verify } from './verify.mjs';
import { readV2Tokens } from './database.mjs';

const USAGE =
  'usage: npm run migrate -- --from <url> --from-token <token> --to <url> --to-token <token> [--dry-run] [--overwrite] [--verify] [--prefix <p>]';

/** `hooks.onSourceExchange` sees every request to the source and its answer (scripts/migrate/record.mjs). */
export async function main(argv, log = (line) => console.log(line), hooks = {}) {
  const { values } = parseArgs({
    args: argv,
    options: {
      from: { type: 'string' },
      'from-token': { type: 'string' },
      to: { type: 'string' },
      'to-token': { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      overwrite: { type: 'boolean', default: false },
      verify: { type: 'boolean', default: false },
      prefix: { type: 'string' },
      'links-file': { type: 'string' },
      'state-file': { type: 'string' },
      report: { type: 'string' },
      contexts: { type: 'string' },
      'from-db': { type: 'string' },
      keys: { type: 'string' },
      'leave-out': { type: 'string' },
    },
  });
  for (const required of ['from', 'from-token', 'to', 'to-token']) {
    if (!values[required]) {
      log(`missing --${required}\n${USAGE}`);
      return 64;
    }
  }
  // One state file per pair of ends (resumption), never holding a secret.
  const pair = createHash('sha256')
    .update(`${values.from}\n${values.to}\n${values.prefix ?? ''}`)
    .digest('hex')
    .slice(0, 16);
  const options = {
    dryRun: values['dry-run'],
    overwrite: values.overwrite,
    prefix: values.prefix,
    linksFile: path.resolve(values['links-file'] ?? `.migrate/reset-links-${pair}.tsv`),
    stateFile: path.resolve(values['state-file'] ?? `.migrate/state-${pair}.json`),
    contexts: values.contexts ? Number(values.contexts) : undefined,
    leaveOut: (values['leave-out'] ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean),
    keys: values.keys ? keysBySelector(readFileSync(values.keys, 'utf8')) : undefined,
  };
  let writes = 0;
  const source = endpoint(values.from, values['from-token'], { name: 'source', dryRun: true, onExchange: hooks.onSourceExchange });
  const target = endpoint(values.to, values['to-token'], { name: 'target', dryRun: options.dryRun, onWrite: () => writes++ });

  try {
    if (values.verify) {
      const result = await verify({ source, target, options, log });
      if (values.report) writeFileSync(values.report, JSON.stringify(result, null, 2));
      return result.differences.length === 0 && result.compared + result.leftOut.length >= result.total ? 0 : 1;
    }
    if (values['from-db']) {
      options.v2Tokens = await readV2Tokens(values['from-db']);
      log(`source database: ${options.v2Tokens.length} v2 token(s) read (read only)`);
    }
    const started = Date.now();
    log(options.dryRun ? 'dry run: nothing will be written' : `copying ${values.from} -> ${values.to}`);
    const report = await migrate({ source, target, options, log });
    log('');
    if (report.notCopyable.length > 0) {
      log('not copied (what the admin must do):');
      for (const item of report.notCopyable) log(`  - ${item.kind}: ${item.name}: ${item.reason}. ${item.action}.`);
    }
    if (report.conflicts.length > 0) {
      log(`existing objects with other content (kept; --overwrite replaces them):`);
      for (const item of report.conflicts) log(`  - ${item.kind}: ${item.name}: ${JSON.stringify(item.difference).slice(0, 400)}`);
    }
    if (report.failures.length > 0) {
      log('failed:');
      for (const item of report.failures) log(`  - ${item.kind}: ${item.name}: ${item.error}`);
    }
    log(
      `${options.dryRun ? 'would write' : 'wrote'}: ${options.dryRun ? countPlanned(report) : writes} request(s) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    if (values.report) {
      writeFileSync(
        values.report,
        JSON.stringify(
          {
            kinds: Object.fromEntries(report.kinds),
            notCopyable: report.notCopyable,
            conflicts: report.conflicts,
            failures: report.failures,
            writes,
          },
          null,
          2,
        ),
      );
    }
    if (report.failures.length > 0) return 1;
    if (report.conflicts.length > 0) return 2;
    return 0;
  } catch (error) {
    log(`migration stopped: ${error.message}`);
    return 1;
  }
}

/** `--keys <file>`: the v2 secrets the services use, one a line, found by their selector. */
function keysBySelector(text) {
  const keys = new Map();
  for (const line of text.split('\n')) {
    const selector = /\.v2_([A-Za-z0-9_-]{22})_/.exec(line.trim())?.[1];
    if (selector) keys.set(selector, line.trim());
  }
  return keys;
}

function countPlanned(report) {
  let planned = 0;
  for (const counts of report.kinds.values()) planned += counts.created + counts.updated;
  return `${planned} object(s)`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await main(process.argv.slice(2));
}
