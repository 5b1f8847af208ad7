// `node bench/search/d1-floor.mjs`: what one local D1 statement costs in this runtime, apart from
// our code. A trivial Worker served by Miniflare's own HTTP server answers `/none` without D1,
// `/one` after `SELECT 1` and `/two` after a batch of two such statements; 200 sequential
// requests each (after 30 untimed), with D1 kept in memory and on disk, twice each, in turn.
// It bounds any search from below: a search must read D1 at least once (bench/search/RESULTS.md).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Miniflare, convertV4MiniflareOptions } from 'miniflare';
import { fmt } from '../lib.mjs';

const script = `export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    if (pathname === '/none') return new Response('x');
    if (pathname === '/two') {
      await env.DB.batch([env.DB.prepare('SELECT 1 AS a'), env.DB.prepare('SELECT 2 AS a')]);
      return new Response('y');
    }
    return new Response(JSON.stringify(await env.DB.prepare('SELECT 1 AS a').first()));
  },
};`;

async function measure(label, persist) {
  const worker = { name: 'd1-floor', modules: true, script, compatibilityDate: '2026-10-30', d1Databases: ['DB'] };
  const mf = new Miniflare(convertV4MiniflareOptions({ host: '127.0.0.1', port: 0, d1Persist: persist, workers: [worker] }));
  const url = await mf.ready;
  try {
    for (const route of ['none', 'one', 'two']) {
      const times = [];
      for (let i = 0; i < 230; i++) {
        const start = performance.now();
        await (await fetch(new URL(route, url))).text();
        if (i >= 30) times.push(performance.now() - start);
      }
      times.sort((a, b) => a - b);
      console.log(`${label} /${route}: p50 ${fmt(times[100], 2)} ms, p90 ${fmt(times[180], 2)} ms`);
    }
  } finally {
    await mf.dispose();
  }
}

for (let pass = 0; pass < 2; pass++) {
  await measure('in memory', false);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'd1-floor-'));
  await measure('on disk', dir);
  rmSync(dir, { recursive: true, force: true });
}
