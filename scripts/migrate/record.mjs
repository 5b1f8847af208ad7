#!/usr/bin/env node
// Records what a real Unleash answers a migration, so CI can replay it without the oracle
// (test/migrate-replay.node.test.ts, served by test/support/migrate-replay.mjs). It seeds the
// oracle (prefix `mig-`), starts a fresh Worker, runs the migration and --verify against it,
// and keeps every request sent to the source with its answer. Nothing is written by hand.
//   node scripts/migrate/record.mjs --oracle 6   (or 8)   [--port 9403] [--url URL] [--token TOKEN]
// Record from a FRESH instance of the oracle's version (--url): a shared oracle holds other
// people's objects and benchmark flags, and every one of them would land in the recording
// (the first recordings, made against the shared oracles, were 52 MB). The replay tests send
// the oracle's usual admin token, which a fresh instance of our oracle scripts also has.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startWorker } from '../../bench/sdk/worker.mjs';
import { main } from './main.mjs';
import { personalToken, seed } from './seed.mjs';

export const ORACLES = {
  6: { url: 'http://127.0.0.1:4243', token: '*:*.unleash6-admin-token', version: '6.10.1' },
  8: { url: 'http://127.0.0.1:4242', token: '*:*.unleash-insecure-admin-api-token', version: '8.2.0' },
};
export const RECORDING_PREFIX = 'mig-';
export const TARGET_TOKEN = '*:*.mig-target-admin';

export function recordingFile(version) {
  return path.join(import.meta.dirname, '..', '..', 'test', 'fixtures', 'migrate', `unleash-${version}.json`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      oracle: { type: 'string', default: '6' },
      port: { type: 'string', default: '9403' },
      url: { type: 'string' },
      token: { type: 'string' },
    },
  });
  const known = ORACLES[values.oracle];
  if (!known) throw new Error(`--oracle is 6 or 8, not ${values.oracle}`);
  const oracle = { ...known, url: values.url ?? known.url, token: values.token ?? known.token };
  // The file is named after the version: refuse to record another one under that name.
  const config = await fetch(`${oracle.url}/api/admin/ui-config`, { headers: { authorization: oracle.token } });
  const running = (await config.json())?.versionInfo?.current?.oss;
  if (running !== oracle.version) throw new Error(`${oracle.url} runs Unleash ${running}, not ${oracle.version}`);
  // Fresh files each time: a state file left by an earlier recording would skip work.
  const work = mkdtempSync(path.join(os.tmpdir(), `mig-record-${values.oracle}-`));
  const importToken = await personalToken(oracle.url, 'admin', 'unleash4all', RECORDING_PREFIX);
  await seed({ url: oracle.url, token: oracle.token, importToken, prefix: RECORDING_PREFIX });
  const worker = await startWorker({ port: Number(values.port), token: TARGET_TOKEN });
  const exchanges = [];
  try {
    const args = [
      '--from',
      oracle.url,
      '--from-token',
      oracle.token,
      '--to',
      worker.base,
      '--to-token',
      TARGET_TOKEN,
      '--prefix',
      RECORDING_PREFIX,
      '--overwrite',
    ];
    const state = ['--state-file', path.join(work, 'state.json'), '--links-file', path.join(work, 'links.tsv')];
    const hooks = { onSourceExchange: (exchange) => exchanges.push(exchange) };
    const copied = await main([...args, ...state], console.log, hooks);
    // The second run asks other things (archived flags are settled): it is recorded too.
    const report = path.join(work, 'report.json');
    const again = await main([...args, ...state, '--report', report], console.log, hooks);
    if (again !== 0 || JSON.parse(readFileSync(report, 'utf8')).writes !== 0) throw new Error('the second recorded run wrote something');
    const verified = await main([...args, '--verify'], console.log, hooks);
    if (copied !== 0 || verified !== 0) throw new Error(`the recorded run did not succeed (migrate ${copied}, verify ${verified})`);
    // A non-admin token, for the refusal test.
    const client = exchanges.find((exchange) => exchange.path === '/api/client/features')?.authorization;
    await main(
      [
        '--from',
        oracle.url,
        '--from-token',
        client,
        '--to',
        worker.base,
        '--to-token',
        TARGET_TOKEN,
        '--prefix',
        RECORDING_PREFIX,
        '--dry-run',
      ],
      console.log,
      hooks,
    );
  } finally {
    await worker.stop();
  }
  const file = recordingFile(oracle.version);
  writeFileSync(
    file,
    JSON.stringify({ recordedAt: new Date().toISOString(), source: oracle.version, url: oracle.url, exchanges }, null, 0) + '\n',
  );
  console.log(`recorded ${exchanges.length} exchanges to ${file}`);
}
