#!/usr/bin/env node
// Impact metrics (Unleash 8): sends the posts of test/fixtures/impact-metrics-8.2.0.json, under
// a fresh name prefix, to the real Unleash 8.2.0 and to this Worker, then compares what each
// prints at GET /internal-backstage/impact/metrics for that prefix (exact text) and the posts'
// statuses. --record writes 8.2.0's answers into the fixture, which the Worker test
// (test/impact-metrics.test.ts) replays. A backend and a frontend key are made on each.
//
//   node scripts/parity/impact-metrics.mjs [--record] [--oracle <url>] [--oracle-token <key>]
//                                          [--ours <url>] [--ours-token <key>]
import { readFileSync, writeFileSync } from 'node:fs';

const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const FIXTURE = new URL('../../test/fixtures/impact-metrics-8.2.0.json', import.meta.url);
const fixture = JSON.parse(readFileSync(FIXTURE, 'utf8'));
const prefix = `impact_${Date.now().toString(36)}_`;
const servers = [
  { name: 'oracle', url: opt('--oracle', 'http://127.0.0.1:4242'), token: opt('--oracle-token', '*:*.unleash-insecure-admin-api-token') },
  ...(args.includes('--record')
    ? []
    : [{ name: 'ours', url: opt('--ours', 'http://127.0.0.1:8787'), token: opt('--ours-token', '*:*.local-dev-admin-token') }]),
];

async function key(server, type) {
  const response = await fetch(`${server.url}/api/admin/api-tokens`, {
    method: 'POST',
    headers: { authorization: server.token, 'content-type': 'application/json' },
    body: JSON.stringify({ tokenName: `${prefix}${type}`, type, environment: 'development', projects: ['*'] }),
  });
  if (response.status !== 201) throw new Error(`${server.name}: ${type} key: ${response.status} ${await response.text()}`);
  return (await response.json()).secret;
}

/** The blocks of the Prometheus text about this run's metrics, the prefix put back to PREFIX_. */
export function ofPrefix(text, runPrefix) {
  const blocks = text.split('\n\n').filter((block) => block.includes(runPrefix));
  return blocks
    .map((block) => (block.endsWith('\n') ? block : `${block}\n`))
    .join('\n')
    .replaceAll(runPrefix, 'PREFIX_');
}

const answers = {};
for (const server of servers) {
  const keys = { backend: await key(server, 'backend'), frontend: await key(server, 'frontend') };
  const statuses = [];
  for (const post of fixture.posts) {
    const body = JSON.stringify(post.body).replaceAll('PREFIX_', prefix);
    const response = await fetch(`${server.url}${post.path}`, {
      method: 'POST',
      headers: { authorization: keys[post.key], 'content-type': 'application/json' },
      body,
    });
    statuses.push(response.status);
  }
  // Ours writes through the metrics Queue, whose consumer waits up to 5 s for a batch (wrangler.toml).
  await new Promise((resolve) => setTimeout(resolve, server.name === 'ours' ? 8000 : 300));
  const response = await fetch(`${server.url}/internal-backstage/impact/metrics`);
  answers[server.name] = { statuses, contentType: response.headers.get('content-type'), text: ofPrefix(await response.text(), prefix) };
}

if (args.includes('--record')) {
  fixture.statuses = answers.oracle.statuses;
  fixture.text = answers.oracle.text;
  writeFileSync(FIXTURE, `${JSON.stringify(fixture, null, 2)}\n`);
  console.log(`recorded ${fixture.posts.length} posts and ${answers.oracle.text.length} characters of text`);
} else {
  const same = JSON.stringify(answers.oracle) === JSON.stringify(answers.ours);
  console.log(same ? 'same statuses, content type and text' : JSON.stringify(answers, null, 2));
  process.exitCode = same ? 0 : 1;
}
