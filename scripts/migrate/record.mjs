#!/usr/bin/env node
// Records what a real Unleash answers a migration, so CI can replay it without the oracle
// (test/migrate-replay.node.test.ts, served by test/support/migrate-replay.mjs). It seeds the
// oracle (prefix `mig-`), starts a fresh Worker, runs the migration and --verify against it,
// and keeps every request sent to the source with its answer. Nothing is written by hand.
//   node scripts/migrate/record.mjs --oracle 6   (or 8)   [--port 9403]
import { readFileSync, writeFileSync } from 'node:fs';
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
    options: { oracle: { type: 'string', default: '6' }, port: { type: 'string', default: '9403' } },
  });
  const oracle = ORACLES[values.oracle];
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
    const state = ['--state-file', `/tmp/mig-record-${values.oracle}.json`, '--links-file', `/tmp/mig-record-links-${values.oracle}.tsv`];
    const hooks = { onSourceExchange: (exchange) => exchanges.push(exchange) };
    const copied = await main([...args, ...state], console.log, hooks);
    // The second run asks other things (archived flags are settled): it is recorded too.
    const report = `/tmp/mig-record-report-${values.oracle}.json`;
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
