#!/usr/bin/env node
// Records answers of the real Unleash 8.2.0 (`../shared/unleash8-oracle`) that Worker tests
// replay, so CI checks us against what 8.2.0 did without reaching it. Run it against the oracle
// (it creates flags named `rec8-<time>-…` and leaves them), then commit test/recorded/unleash8/.
//
//   UNLEASH8_URL=http://127.0.0.1:4242 UNLEASH8_TOKEN=<a PAT> node scripts/record-unleash8.mjs
//
// A PAT, not the admin token: 8.2.0 refuses admin tokens on some operations.
import { writeFileSync } from 'node:fs';

const BASE = process.env.UNLEASH8_URL ?? 'http://127.0.0.1:4242';
const TOKEN = process.env.UNLEASH8_TOKEN;
if (!TOKEN) throw new Error('UNLEASH8_TOKEN (a personal access token of the oracle) is required');
const OUT = new URL('../test/recorded/unleash8/', import.meta.url);
const prefix = `rec8-${Date.now().toString(36)}`;

async function call(method, path, body) {
  const response = await fetch(`${BASE}${path}`, {
    method,
    headers: { authorization: TOKEN, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = text;
  }
  return { status: response.status, body: json };
}

/** An error body without its per-request id, which differs on every call. */
function error(body) {
  if (!body || typeof body !== 'object') return body;
  const { id: _id, ...rest } = body;
  return rest;
}

async function flag(name) {
  const created = await call('POST', '/api/admin/projects/default/features', { name });
  if (created.status !== 201) throw new Error(`create ${name}: ${created.status} ${JSON.stringify(created.body)}`);
  return `/api/admin/projects/default/features/${name}`;
}

async function links(path) {
  return (await call('GET', path)).body.links;
}

// Links in export and import (7.0+): the export's `links`, what an import does with them, and
// how it refuses bad ones. `RECORD_ONLY=import-links` records just this part.
async function recordImportLinks() {
  const a = `${prefix}-imp-a`;
  const b = `${prefix}-imp-b`;
  const feature = (name) => ({
    name,
    type: 'release',
    project: 'default',
    description: null,
    stale: false,
    impressionData: false,
    archived: false,
  });
  const data = (names, linkEntries) => ({
    features: names.map(feature),
    featureStrategies: [],
    featureEnvironments: [],
    contextFields: [],
    featureTags: [],
    segments: [],
    tagTypes: [],
    dependencies: [],
    ...(linkEntries === undefined ? {} : { links: linkEntries }),
  });
  const importing = (names, linkEntries) =>
    call('POST', '/api/admin/features-batch/import', { project: 'default', environment: 'development', data: data(names, linkEntries) });
  const read = async (name) => (await links(`/api/admin/projects/default/features/${name}`)).map(({ url, title }) => ({ url, title }));
  const steps = [];
  const step = async (label, names, linkEntries) => {
    const answer = await importing(names, linkEntries);
    steps.push({
      label,
      links: linkEntries,
      status: answer.status,
      answer: error(answer.body),
      after: { [a]: await read(a).catch(() => null), [b]: await read(b).catch(() => null) },
    });
  };
  await flag(a);
  await call('POST', `/api/admin/projects/default/features/${a}/link`, { url: 'https://old.example', title: 'Old' });
  await step(
    'replaces the links of a named flag and adds a new flag with its links',
    [a, b],
    [
      {
        feature: a,
        links: [
          { url: 'new.example/x', title: 'New' },
          { id: 'ignored', url: 'https://n2.example', title: '' },
        ],
      },
      { feature: b, links: [{ url: 'https://b.example', extra: 1 }] },
    ],
  );
  await step('without links leaves them', [a]);
  await step('links: [] leaves them', [a], []);
  await step('an entry with no links clears them', [a], [{ feature: a, links: [] }]);
  await step('a number title is taken as text', [a], [{ feature: a, links: [{ url: 'https://t.example', title: 5 }] }]);
  await step(
    'a bad URL refuses the import',
    [a, `${prefix}-imp-c`],
    [{ feature: a, links: [{ url: 'https://ok.example' }, { url: 'a b' }] }],
  );
  await step(
    'eleven links refuse the import',
    [a],
    [{ feature: a, links: Array.from({ length: 11 }, (_, i) => ({ url: `https://e${i}.example` })) }],
  );
  await step('links of an unknown flag refuse the import', [a], [{ feature: `${prefix}-ghost`, links: [{ url: 'https://g.example' }] }]);
  await step('an extra key on an entry', [a], [{ feature: a, links: [], x: 1 }]);
  await step('a link without url', [a], [{ feature: a, links: [{ title: 't' }] }]);
  await step('an entry without links', [a], [{ feature: a }]);
  const validate = await call('POST', '/api/admin/features-batch/validate', {
    project: 'default',
    environment: 'development',
    data: data([a], [{ feature: a, links: [{ url: 'a b' }] }]),
  });
  await call('POST', `/api/admin/projects/default/features/${a}/link`, { url: 'https://second.example' });
  const exported = await call('POST', '/api/admin/features-batch/export', { features: [a, b], environment: 'development' });
  const events = (await call('GET', '/api/admin/events')).body.events
    .filter((event) => (event.featureName === a || event.featureName === b) && event.type === 'feature-link-added')
    .reverse()
    .map(({ type, data: eventData, preData, featureName, project, environment }) => ({
      type,
      data: eventData,
      preData,
      featureName,
      project,
      environment,
    }));
  const anonymise = (value) => JSON.parse(JSON.stringify(value).replaceAll(a, '<A>').replaceAll(b, '<B>').replaceAll(prefix, '<prefix>'));
  writeFileSync(
    new URL('import-links.json', OUT),
    `${JSON.stringify(
      anonymise({
        recordedFrom: 'Unleash 8.2.0 (unleash-server@8.2.0, open source)',
        recordedAt: new Date().toISOString(),
        steps,
        validate: { status: validate.status, answer: validate.body },
        exportKeys: Object.keys(exported.body),
        exportLinks: exported.body.links.map((entry) => ({
          keys: Object.keys(entry),
          feature: entry.feature,
          links: entry.links.map((link) => ({ keys: Object.keys(link), url: link.url, title: link.title })),
        })),
        events,
      }),
      null,
      2,
    )}\n`,
  );
  console.log(`recorded ${steps.length} import steps with links`);
}
// What the 8.2.0 parity sweep (`scripts/parity-sweep.mjs --v8`) found and we now answer as
// 8.2.0 does: `/ready`, the names of the validate and export 400s, and `technicalDebt` beside
// `health` in the project reads (key lists of the default project's answers, not their values,
// which hold what others made on the shared oracle). `RECORD_ONLY=sweep-fixes`.
async function recordSweepFixes() {
  const ready = await fetch(`${BASE}/ready`);
  const keys = (value) => Object.keys(value);
  const projects = (await call('GET', '/api/admin/projects')).body.projects.find((p) => p.id === 'default');
  const overview = (await call('GET', '/api/admin/projects/default/overview')).body;
  const report = (await call('GET', '/api/admin/projects/default/health-report')).body;
  const insights = (await call('GET', '/api/admin/projects/default/insights')).body;
  const status = (await call('GET', '/api/admin/projects/default/status')).body;
  const statistics = (await call('GET', '/api/admin/instance-admin/statistics')).body;
  const csv = await fetch(`${BASE}/api/admin/instance-admin/statistics/csv`, { headers: { authorization: TOKEN } });
  const refusal = async (path, body) => {
    const answer = await call('POST', path, body);
    return { status: answer.status, body: error(answer.body) };
  };
  writeFileSync(
    new URL('sweep-fixes.json', OUT),
    `${JSON.stringify(
      {
        recordedFrom: 'Unleash 8.2.0 (unleash-server@8.2.0, open source)',
        recordedAt: new Date().toISOString(),
        ready: { status: ready.status, contentType: ready.headers.get('content-type'), body: await ready.json() },
        validateWithoutData: await refusal('/api/admin/features-batch/validate', { project: 'default', environment: 'development' }),
        exportBadFeatures: await refusal('/api/admin/features-batch/export', { features: 'x', environment: 'development' }),
        projectsItemKeys: keys(projects),
        projectsDebtIsInverseHealth: projects.technicalDebt === 100 - projects.health,
        overviewKeys: keys(overview),
        overviewLinkTemplates: overview.linkTemplates,
        healthReportKeys: keys(report),
        healthReportDebtIsInverseHealth: report.technicalDebt === 100 - report.health,
        insightsKeys: keys(insights),
        insightsTechnicalDebtKeys: keys(insights.technicalDebt),
        insightsDebtIsInverseHealth:
          insights.technicalDebt.rating === 100 - insights.health.rating &&
          insights.technicalDebt.staleCount === insights.health.staleCount,
        statusKeys: keys(status),
        statusTechnicalDebtKeys: keys(status.technicalDebt),
        statusDebtIsInverseHealth: status.technicalDebt.current === 100 - status.health.current,
        statisticsKeys: keys(statistics),
        statisticsApiTokenTypes: keys(statistics.apiTokens).sort(),
        statisticsEdgeInstanceMonths: keys(statistics.edgeInstanceUsage),
        statisticsOpenSourceZeros: {
          releasePlans: statistics.releasePlans,
          readOnlyUsers: statistics.readOnlyUsers,
          edgeInstanceUsage: [...new Set(Object.values(statistics.edgeInstanceUsage))],
        },
        statisticsCsvHeader: (await csv.text()).split('\n')[0],
      },
      null,
      2,
    )}\n`,
  );
  console.log('recorded the sweep fixes');
}
if (process.env.RECORD_ONLY === 'sweep-fixes') {
  await recordSweepFixes();
  process.exit(0);
}

if (process.env.RECORD_ONLY === 'import-links') {
  await recordImportLinks();
  process.exit(0);
}

// Link URLs: what 8.2.0 stores for each input, or how it refuses it (one flag per 9 inputs,
// under the limit of 10 links a flag).
const URL_INPUTS = [
  'https://example.com/a',
  'notaurl',
  'ftp://x.com',
  'FTP://X.COM/',
  '//x.com',
  'javascript:alert(1)',
  'HTTPS://X.COM/P',
  'x.com/path?q=1',
  'https://x.com/',
  'https://X.com:443/a#h',
  'https://user:pw@x.com',
  'x.com:8080',
  'HTTP://Ex.COM',
  'mailto:a@b.c',
  'Mailto:A@B.c',
  'x:y',
  'https://x.com/%zz',
  'https://ex.com/a b',
  'https://xn--bcher-kva.ch',
  'https://bücher.ch/Ä',
  '  https://trim.com  ',
  'https://x.com/a/',
  'https://x.com/?',
  'https://x.com?q#',
  5,
  '',
  ' ',
  'a b',
  'http://',
  'http://a b',
  'http:x.com',
];
await recordImportLinks();
const urls = [];
for (let start = 0; start < URL_INPUTS.length; start += 9) {
  const path = await flag(`${prefix}-urls-${start}`);
  for (const url of URL_INPUTS.slice(start, start + 9)) {
    const answer = await call('POST', `${path}/link`, { url });
    const stored = answer.status === 204 ? (await links(path)).at(-1).url : undefined;
    urls.push({ url, status: answer.status, ...(stored === undefined ? { error: error(answer.body) } : { stored }) });
  }
}

// Bodies: titles, refusals, the limit, update and delete, and the events they write.
const path = await flag(`${prefix}-cases`);
const cases = [];
async function record(label, method, suffix, body) {
  const answer = await call(method, `${path}${suffix}`, body);
  cases.push({ label, method, body, status: answer.status, answer: answer.status === 204 ? null : error(answer.body) });
  return answer;
}
await record('no url', 'POST', '/link', {});
await record('array body', 'POST', '/link', []);
await record('object title', 'POST', '/link', { url: 'https://x.com', title: { a: 1 } });
await record('number title', 'POST', '/link', { url: 'https://n.com', title: 5 });
await record('null title and an extra key', 'POST', '/link', { url: 'https://x.com', title: null, extra: 1 });
await record('title', 'POST', '/link', { url: 'https://t.com', title: '  t  ' });
let list = await links(path);
const first = list[0].id;
await record('update without title keeps it', 'PUT', `/link/${first}`, { url: 'https://n2.com' });
await record('update with null title', 'PUT', `/link/${first}`, { url: 'https://n3.com', title: null });
await record('update of an unknown id', 'PUT', '/link/nope', { url: 'https://x.com' });
await record('update with a bad url', 'PUT', `/link/${first}`, { url: 'a b' });
await record('delete of an unknown id', 'DELETE', '/link/nope');
for (let i = 0; list.length < 10; i += 1) {
  await call('POST', `${path}/link`, { url: `https://fill${i}.com` });
  list = await links(path);
}
await record('eleventh link', 'POST', '/link', { url: 'https://eleven.com' });
await record('eleventh link, bad url', 'POST', '/link', { url: 'a b' });
await record('eleventh link, object title', 'POST', '/link', { url: 'https://x.com', title: { a: 1 } });
await record('delete', 'DELETE', `/link/${list.at(-1).id}`);
const read = (await call('GET', path)).body;
const events = (await call('GET', `/api/admin/events?feature=${prefix}-cases`)).body.events
  .filter((event) => event.featureName === `${prefix}-cases` && event.type.startsWith('feature-link'))
  .reverse()
  .map(({ type, data, preData, featureName, project, environment }) => ({ type, data, preData, featureName, project, environment }));
const missing = await call('POST', `/api/admin/projects/default/features/${prefix}-ghost/link`, { url: 'https://x.com' });

writeFileSync(
  new URL('feature-links.json', OUT),
  `${JSON.stringify(
    {
      recordedFrom: 'Unleash 8.2.0 (unleash-server@8.2.0, open source)',
      recordedAt: new Date().toISOString(),
      urls,
      cases,
      readKeys: Object.keys(read),
      linkKeys: Object.keys(read.links[0]),
      links: read.links.map(({ url, title }) => ({ url, title })),
      events,
      missingFeature: { status: missing.status, answer: error(missing.body) },
    },
    null,
    2,
  )}\n`,
);
console.log(`recorded ${urls.length} urls, ${cases.length} cases, ${events.length} events`);

// Project context fields: key orders and the answers of each operation.
{
  const base = '/api/admin/projects/default/context';
  const name = `${prefix}-ctx`;
  const steps = [];
  const step = async (label, method, path, body) => {
    const answer = await call(method, path, body);
    steps.push({ label, method, status: answer.status, answer: answer.status >= 400 ? error(answer.body) : answer.body });
    return answer;
  };
  const created = await step('create', 'POST', base, {
    name,
    description: 'd',
    legalValues: [{ value: 'a' }],
    stickiness: true,
    sortOrder: 3,
  });
  await step('create again', 'POST', base, { name });
  await step('create a global name', 'POST', base, { name: 'userId' });
  await step('create, not URL friendly', 'POST', base, { name: 'a b' });
  const list = await call('GET', base);
  await step('get', 'GET', `${base}/${name}`);
  await step('get a global field', 'GET', `${base}/userId`);
  await step('get an unknown field', 'GET', `${base}/${prefix}-none`);
  await step('update', 'PUT', `${base}/${name}`, { name, description: 'd2', legalValues: [{ value: 'b' }] });
  await step('update a global field', 'PUT', `${base}/userId`, { name: 'userId', description: 'x' });
  await step('add a legal value', 'POST', `${base}/${name}/legal-values`, { value: 'c', description: 'cc' });
  await step('remove a legal value', 'DELETE', `${base}/${name}/legal-values/b`);
  await step('add a legal value to a global field', 'POST', `${base}/userId/legal-values`, { value: 'z' });
  await step('strategies', 'GET', `${base}/${name}/strategies`);
  await step('validate a taken name', 'POST', `${base}/validate`, { name });
  await step('validate a free name', 'POST', `${base}/validate`, { name: `${prefix}-free` });
  await step('read after writes', 'GET', `${base}/${name}`);
  await step('delete a global field', 'DELETE', `${base}/userId`);
  await step('delete', 'DELETE', `${base}/${name}`);
  await step('delete again', 'DELETE', `${base}/${name}`);
  const globalList = (await call('GET', '/api/admin/context')).body;
  writeFileSync(
    new URL('project-context-fields.json', OUT),
    `${JSON.stringify(
      {
        recordedFrom: 'Unleash 8.2.0 (unleash-server@8.2.0, open source)',
        createdKeys: Object.keys(created.body),
        listKeys: Object.keys(list.body.find((field) => field.name === name)),
        listedGlobally: globalList.some((field) => field.name === name),
        steps: steps.map((entry) => ({
          ...entry,
          answer:
            entry.answer && typeof entry.answer === 'object' && 'createdAt' in entry.answer
              ? { ...entry.answer, createdAt: '<date>' }
              : entry.answer,
        })),
      },
      null,
      2,
    )}\n`,
  );
}
