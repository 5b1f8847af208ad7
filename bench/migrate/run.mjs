// bench/migrate: how long `npm run migrate` takes to copy 10,000 flags from the Unleash 6.10.1
// oracle into a fresh Worker (target: under a minute), and how long a second run (nothing to
// write) takes. The flags are seeded once into the oracle under the prefix `migbench-` through
// its import API, in batches of 1,000 (development only, to keep the shared oracle's seeding short).
//   node bench/migrate/run.mjs [--flags 10000] [--port 9405]
import { execSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startWorker } from '../sdk/worker.mjs';
import { main } from '../../scripts/migrate/main.mjs';
import { personalToken, seed } from '../../scripts/migrate/seed.mjs';

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { flags: { type: 'string', default: '10000' }, port: { type: 'string', default: '9405' } },
});
const SOURCE = process.env.UNLEASH6_URL ?? 'http://127.0.0.1:4243';
const SOURCE_TOKEN = '*:*.unleash6-admin-token';
const TARGET_TOKEN = '*:*.migbench-admin';
const PREFIX = 'migbench-';
const flags = Number(values.flags);

const seedStarted = Date.now();
const importToken = await personalToken(SOURCE, 'admin', 'unleash4all', PREFIX);
await seed({
  url: SOURCE,
  token: SOURCE_TOKEN,
  importToken,
  prefix: PREFIX,
  flags,
  withUsers: false,
  archive: false,
  environments: ['development'],
  batch: 200,
  log: console.log,
});
console.log(`seeded (or found) ${flags} flags in ${((Date.now() - seedStarted) / 1000).toFixed(0)} s`);

const worker = await startWorker({ port: Number(values.port), token: TARGET_TOKEN });
const work = mkdtempSync(path.join(os.tmpdir(), 'migbench-'));
const args = [
  '--from',
  SOURCE,
  '--from-token',
  SOURCE_TOKEN,
  '--to',
  worker.base,
  '--to-token',
  TARGET_TOKEN,
  '--prefix',
  PREFIX,
  '--overwrite',
];
const files = ['--state-file', path.join(work, 'state.json'), '--links-file', path.join(work, 'links.tsv')];
try {
  const load = os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
  const first = Date.now();
  const code = await main([...args, ...files, '--report', path.join(work, 'first.json')], () => undefined);
  const firstSeconds = (Date.now() - first) / 1000;
  const report = JSON.parse(readFileSync(path.join(work, 'first.json'), 'utf8'));
  const second = Date.now();
  const again = await main([...args, ...files, '--report', path.join(work, 'second.json')], () => undefined);
  const secondSeconds = (Date.now() - second) / 1000;
  const secondReport = JSON.parse(readFileSync(path.join(work, 'second.json'), 'utf8'));
  console.log(
    JSON.stringify(
      {
        date: new Date().toISOString(),
        machine: `${os.cpus().length} x ${os.cpus()[0]?.model}`,
        loadBefore: load,
        loadAfter: os
          .loadavg()
          .map((n) => n.toFixed(2))
          .join(' '),
        flags: report.kinds.flags,
        firstRun: { exit: code, seconds: firstSeconds, writes: report.writes },
        secondRun: { exit: again, seconds: secondSeconds, writes: secondReport.writes },
        uptime: execSync('uptime').toString().trim(),
      },
      null,
      2,
    ),
  );
} finally {
  await worker.stop();
}
