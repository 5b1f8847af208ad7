// What the admin UI's two busiest pages ask the API, timed at 10k flags, and search sorted by
// last seen at 100k. Each page's calls are the ones Unleash 6.10.1's UI makes on load (seen in
// the browser tests); one "page load" fires them together, as the browser does.
//
//   npm run bench -- ui            (UI_SIZES=10000,100000 by default)
//
// Writes bench/ui/RESULTS.md.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, fmt, load, machine, startWorker } from '../lib.mjs';
import { seedSql } from '../search/seed.mjs';

const PORT = 8812;
const SIZES = (process.env.UI_SIZES ?? '10000,100000').split(',').map(Number);
const REQUESTS = Number(process.env.UI_REQUESTS ?? 100);
const TARGET_P95_MS = 50;

const SEARCH_PAGE = [
  '/api/admin/search/features?offset=0&limit=25&favoritesFirst=true&sortBy=createdAt&sortOrder=desc',
  '/api/admin/projects',
  '/api/admin/tags',
  '/api/admin/segments',
  '/api/admin/feature-types',
  '/api/admin/environments',
];
const PROJECT_PAGE = [
  '/api/admin/projects/default/overview',
  '/api/admin/search/features?project=IS%3Adefault&offset=0&limit=25&favoritesFirst=true&sortBy=createdAt&sortOrder=desc',
  '/api/admin/projects/default/flag-creators',
  '/api/admin/projects/default/dependencies',
  '/api/admin/tags',
  '/api/admin/feature-types',
  '/api/admin/environments',
  '/api/admin/projects',
];
const LAST_SEEN = ['/api/admin/search/features?sortBy=lastSeenAt&sortOrder=desc&offset=0&limit=25'];
// The same page in creation order: what an index-ordered search costs on the same box, same minute.
const CREATED = ['/api/admin/search/features?offset=0&limit=25'];

function scenarios(n) {
  const rows = [
    ['search sorted by lastSeenAt desc', LAST_SEEN],
    ['search in creation order (baseline)', CREATED],
  ];
  if (n <= 10_000) {
    // The target is per call; whole page loads (all calls at once) are shown for what a person waits.
    for (const url of new Set([...SEARCH_PAGE, ...PROJECT_PAGE])) rows.push([`\`${url.replace('/api/admin/', '')}\``, [url]]);
    rows.push(['search page load (6 calls at once)', SEARCH_PAGE], ['project page load (8 calls at once)', PROJECT_PAGE]);
  }
  return rows;
}

const results = [];
for (const n of SIZES) {
  console.log(`seeding ${n} features ...`);
  const worker = await startWorker({
    port: PORT,
    seedSql(persistTo) {
      const file = path.join(persistTo, 'seed.sql');
      writeFileSync(file, seedSql(n));
      return file;
    },
  });
  try {
    for (const [label, urls] of scenarios(n)) {
      const get = async (url) => {
        const response = await fetch(`${worker.base}${url}`, { headers: { authorization: worker.token } });
        if (response.status !== 200) throw new Error(`${url}: ${response.status} ${await response.text()}`);
        await response.arrayBuffer();
      };
      // A page load is done when its slowest call is.
      const result = await load(() => Promise.all(urls.map(get)), { total: REQUESTS, concurrency: 1, warmup: 5 });
      results.push({ n, label, calls: urls.length, ...result });
      console.log(`  ${label.padEnd(34)} p50 ${fmt(result.p50)} ms  p95 ${fmt(result.p95)} ms`);
    }
  } finally {
    await worker.stop();
  }
}

const info = machine();
const table = [
  '| flags | what | calls | p50 ms | p95 ms | p95 < 50 ms |',
  '|---:|---|---:|---:|---:|:---:|',
  ...results.map(
    (row) =>
      `| ${row.n} | ${row.label.trim()} | ${row.calls} | ${fmt(row.p50)} | ${fmt(row.p95)} | ${row.p95 < TARGET_P95_MS ? 'yes' : `**no** (+${fmt(row.p95 - TARGET_P95_MS)} ms)`} |`,
  ),
];
const report = `# Admin UI pages benchmark

- Date: ${info.date}
- Machine: ${info.cpu}, ${info.memoryGiB} GiB RAM, Node ${info.node}, load average at the end ${info.loadAvg}
- How: \`npm run bench -- ui\`. Fresh local D1 under \`wrangler dev\` (port ${PORT}) seeded with the search
  benchmark's data set (bench/search/seed.mjs: 3 environments, 2 tags, a strategy per flag, a third of the
  flags seen in development). ${REQUESTS} page loads per row (5 warm-up), one after another; a page load sends
  the page's calls together, as the browser does, and ends when the slowest answers. Latency is
  client-observed (it includes wrangler dev's local proxy).
- Search page: ${SEARCH_PAGE.map((url) => `\`${url}\``).join(', ')}.
- Project page: ${PROJECT_PAGE.map((url) => `\`${url}\``).join(', ')}.

${table.join('\n')}

Search sorted by \`lastSeenAt\` newest first used to rank every flag by a key computed from its
environment rows (178 ms p95 at 100k in bench/search). A flag's own \`last_seen_at\` is now kept no
older than any of its environments' by two triggers (migrations/0011_ui.sql), so the sort reads
\`features_archived_last_seen_idx\` in order and stops after the page.
`;
writeFileSync(path.join(ROOT, 'bench', 'ui', 'RESULTS.md'), report);
console.log(`\n${table.join('\n')}\n\nwrote bench/ui/RESULTS.md`);
