import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { captureLogs } from './support/logs';
import { retryDelaySeconds } from '../src/integrations/addons/delivery';
import { INTEGRATION_LOG_KEPT, pruneIntegrationDeliveries, runScheduledJobs } from '../src/scheduled';
import { refusedTarget } from '../src/integrations/addons/targets';
import { bodyOf, call } from './support/http';
import { deliveryLog, receivedAt, scriptReceiver, waitForLog } from './support/integrations';

let counter = 0;
function unique(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${++counter}`;
}

async function createFlag(name: string) {
  const response = await call('POST', '/api/admin/projects/default/features', { body: { name } });
  if (response.status !== 201) throw new Error(`flag creation failed: ${response.status} ${await response.text()}`);
}

async function toggle(name: string, environment: string, on: boolean) {
  const response = await call('POST', `/api/admin/projects/default/features/${name}/environments/${environment}/${on ? 'on' : 'off'}`);
  if (response.status !== 200) throw new Error(`toggle failed: ${response.status} ${await response.text()}`);
}

async function createWebhook(at: string, extra: Record<string, unknown> = {}, parameters: Record<string, unknown> = {}) {
  const response = await call('POST', '/api/admin/addons', {
    body: {
      provider: 'webhook',
      enabled: true,
      parameters: { url: `https://${at}`, ...parameters },
      events: ['feature-environment-enabled', 'feature-environment-disabled'],
      environments: ['production'],
      ...extra,
    },
  });
  if (response.status !== 201) throw new Error(`addon creation failed: ${response.status} ${await response.text()}`);
  return (await bodyOf<{ id: number }>(response)).id;
}

async function deliveryRows(addonId: number) {
  return (await env.DB.prepare('SELECT * FROM addon_deliveries WHERE addon_id = ? ORDER BY id').bind(addonId).all<Record<string, any>>())
    .results;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Every integration listens to all flags: each test removes its own, so that the next test's
// toggles go only to the integrations it made.
afterEach(async () => {
  const { addons } = await bodyOf<{ addons: { id: number }[] }>(await call('GET', '/api/admin/addons'));
  for (const { id } of addons) await call('DELETE', `/api/admin/addons/${id}`);
});

describe('delivery of audit events to a webhook', () => {
  it('a flag turned on in production reaches the webhook with the rendered body and headers, and the log shows it', async () => {
    const at = `${unique('hooks')}.receiver.test/deploy`;
    const flag = unique('checkout');
    await createFlag(flag);
    const addonId = await createWebhook(
      at,
      {},
      {
        authorization: 'Bearer hook-s3cret',
        customHeaders: '{"X-Team":"core"}',
        bodyTemplate: '{"flag":"{{event.featureName}}","env":"{{event.environment}}","by":"{{event.createdBy}}","type":"{{event.type}}"}',
      },
    );
    await toggle(flag, 'production', true);

    const [entry] = await waitForLog(addonId);
    const [request] = await receivedAt(at);
    expect(request!.method).toBe('POST');
    expect(JSON.parse(request!.body)).toEqual({ flag, env: 'production', by: 'admin', type: 'feature-environment-enabled' });
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers.authorization).toBe('Bearer hook-s3cret');
    expect(request!.headers['x-team']).toBe('core');

    expect(Object.keys(entry!)).toEqual(['id', 'integrationId', 'createdAt', 'state', 'stateDetails', 'event', 'details']);
    expect(entry).toMatchObject({
      integrationId: addonId,
      state: 'success',
      stateDetails: 'Webhook request was successful with status code: 200.',
      event: { type: 'feature-environment-enabled', featureName: flag, environment: 'production', project: 'default', createdBy: 'admin' },
      details: { contentType: 'application/json', body: request!.body },
    });
    expect(entry!.id).toMatch(/^[0-9]+$/);
    // The webhook's URL and authorization are secrets: the log shows neither.
    expect(JSON.stringify(entry)).not.toContain('hook-s3cret');
    expect(JSON.stringify(entry)).not.toContain(at);
  });

  it('without a template the body is the event as the events API shows it', async () => {
    const at = `${unique('hooks')}.receiver.test/raw`;
    const flag = unique('raw');
    await createFlag(flag);
    const addonId = await createWebhook(at);
    await toggle(flag, 'production', true);
    await waitForLog(addonId);
    const [request] = await receivedAt(at);
    const event = JSON.parse(request!.body);
    expect(Object.keys(event)).toEqual([
      'id',
      'type',
      'createdBy',
      'createdAt',
      'createdByUserId',
      'data',
      'preData',
      'tags',
      'featureName',
      'project',
      'environment',
    ]);
    expect(event).toMatchObject({ type: 'feature-environment-enabled', featureName: flag, environment: 'production' });
  });

  it('filters by event type, environment and project; a disabled integration gets nothing', async () => {
    const flag = unique('filtered');
    await createFlag(flag);
    const wrongEnvironment = `${unique('dev')}.receiver.test/x`;
    const wrongProject = `${unique('proj')}.receiver.test/x`;
    const wrongType = `${unique('type')}.receiver.test/x`;
    const disabled = `${unique('off')}.receiver.test/x`;
    const matching = `${unique('all')}.receiver.test/x`;
    await createWebhook(wrongEnvironment, { environments: ['development'] });
    await createWebhook(wrongProject, { projects: ['elsewhere'] });
    await createWebhook(wrongType, { events: ['feature-archived'] });
    await createWebhook(disabled, { enabled: false });
    const matchingId = await createWebhook(matching, { projects: ['default'], environments: [] });

    await toggle(flag, 'production', true);
    await waitForLog(matchingId);
    await sleep(300);
    for (const at of [wrongEnvironment, wrongProject, wrongType, disabled]) expect(await receivedAt(at)).toEqual([]);
    expect(await receivedAt(matching)).toHaveLength(1);
  });

  it('retries after a 500 and succeeds: one log entry, two requests', async () => {
    const logs = captureLogs();
    const at = `${unique('flaky')}.receiver.test/x`;
    await scriptReceiver(at, [500]);
    const flag = unique('retry');
    await createFlag(flag);
    const addonId = await createWebhook(at);
    await toggle(flag, 'production', true);
    const [entry] = await waitForLog(addonId);
    expect(entry!.state).toBe('success');
    expect(await receivedAt(at)).toHaveLength(2);
    const [row] = await deliveryRows(addonId);
    expect(row).toMatchObject({ status: 'sent', attempts: 2 });
    expect(logs.messages()).toContain('integration delivery will be retried');
  });

  it('after the last retry the failure and its reason are in the log (dead letter)', async () => {
    const logs = captureLogs();
    const at = `${unique('down')}.receiver.test/x`;
    await scriptReceiver(at, Array(20).fill(503));
    const flag = unique('dead');
    await createFlag(flag);
    const addonId = await createWebhook(at);
    await toggle(flag, 'production', true);
    const [entry] = await waitForLog(addonId, 1, 25_000);
    expect(entry).toMatchObject({ state: 'failed', stateDetails: 'Gave up after 6 tries. Webhook request failed with status code: 503.' });
    expect(entry!.event).toMatchObject({ featureName: flag });
    // max_retries = 5 in wrangler.toml: one try and five retries.
    expect(await receivedAt(at)).toHaveLength(6);
    expect((await deliveryRows(addonId))[0]).toMatchObject({ status: 'failed' });
    expect(logs.messages()).toContain('integration delivery will be retried');
  }, 40_000);

  it('a 4xx answer is final: not retried, logged as failed', async () => {
    const at = `${unique('gone')}.receiver.test/x`;
    await scriptReceiver(at, [404]);
    const flag = unique('gone');
    await createFlag(flag);
    const addonId = await createWebhook(at);
    await toggle(flag, 'production', true);
    const [entry] = await waitForLog(addonId);
    expect(entry).toMatchObject({ state: 'failed', stateDetails: 'Webhook request failed with status code: 404.' });
    await sleep(300);
    expect(await receivedAt(at)).toHaveLength(1);
  });

  it('a delivery the receiver answered 2xx is not sent again when its message comes back', async () => {
    const at = `${unique('once')}.receiver.test/x`;
    const flag = unique('once');
    await createFlag(flag);
    const addonId = await createWebhook(at);
    await toggle(flag, 'production', true);
    await waitForLog(addonId);
    const [row] = await deliveryRows(addonId);
    await env.INTEGRATIONS_QUEUE.send({ deliveryId: row!.id });
    await env.INTEGRATIONS_QUEUE.send({ deliveryId: row!.id });
    await sleep(1000);
    expect(await receivedAt(at)).toHaveLength(1);
    expect(await deliveryLog(addonId)).toHaveLength(1);
  });

  it('events of one flag arrive in order', async () => {
    const logs = captureLogs();
    const at = `${unique('order')}.receiver.test/x`;
    await scriptReceiver(at, [500]);
    const flag = unique('order');
    await createFlag(flag);
    const addonId = await createWebhook(at, {}, { bodyTemplate: '{{event.type}}' });
    await toggle(flag, 'production', true);
    await toggle(flag, 'production', false);
    await waitForLog(addonId, 2, 30_000);
    const bodies = (await receivedAt(at)).map((request) => request.body);
    // The first try of the first event failed; the second event waited for its retry.
    expect(bodies).toEqual(['feature-environment-enabled', 'feature-environment-enabled', 'feature-environment-disabled']);
    expect(logs.messages()).toContain('integration delivery will be retried');
  }, 40_000);

  it('refuses loopback and private targets (INTEGRATIONS_ALLOW_PRIVATE_TARGETS unset) and logs why', async () => {
    const flag = unique('private');
    await createFlag(flag);
    const response = await call('POST', '/api/admin/addons', {
      body: { provider: 'webhook', enabled: true, parameters: { url: 'http://127.0.0.1:9/hook' }, events: ['feature-environment-enabled'] },
    });
    const { id } = await bodyOf<{ id: number }>(response);
    await toggle(flag, 'production', true);
    const [entry] = await waitForLog(id);
    expect(entry!.state).toBe('failed');
    expect(entry!.stateDetails).toContain('Refused to call 127.0.0.1');
  });

  it('other providers: Datadog gets its API key header and the event text', async () => {
    const at = `${unique('dd')}.receiver.test/api/v1/events`;
    const flag = unique('dd');
    await createFlag(flag);
    const response = await call('POST', '/api/admin/addons', {
      body: {
        provider: 'datadog',
        enabled: true,
        parameters: { url: `https://${at}`, apiKey: 'dd-s3cret' },
        events: ['feature-environment-enabled'],
      },
    });
    const { id } = await bodyOf<{ id: number }>(response);
    await toggle(flag, 'production', true);
    const [entry] = await waitForLog(id);
    expect(entry!.state).toBe('success');
    const [request] = await receivedAt(at);
    expect(request!.headers['dd-api-key']).toBe('dd-s3cret');
    expect(JSON.parse(request!.body)).toMatchObject({ title: 'Unleash notification update', tags: [] });
    expect(JSON.parse(request!.body).text).toContain(flag);
    expect(JSON.stringify(entry)).not.toContain('dd-s3cret');
  });
});

const SLACK = 'slack.com/api/chat.postMessage';

async function createSlackApp(channels: string, extra: Record<string, unknown> = {}) {
  const response = await call('POST', '/api/admin/addons', {
    body: {
      provider: 'slack-app',
      enabled: true,
      parameters: { accessToken: 'xoxb-s3cret', defaultChannels: channels },
      events: ['feature-environment-enabled'],
      ...extra,
    },
  });
  if (response.status !== 201) throw new Error(`addon creation failed: ${response.status} ${await response.text()}`);
  return (await bodyOf<{ id: number }>(response)).id;
}

describe('Slack App: one post per channel', () => {
  it("a retry posts only to the channels that did not answer 2xx (its default channels and the flag's slack tags)", async () => {
    const logs = captureLogs();
    const [first, second, tagged] = [unique('general'), unique('ops'), unique('team')];
    await scriptReceiver(`${SLACK}#${second}`, [500]);
    const flag = unique('slack');
    await createFlag(flag);
    const addonId = await createSlackApp(`${first}, ${second}`);
    // The slack tag type exists: creating the Slack App integration made it.
    expect((await call('POST', `/api/admin/features/${flag}/tags`, { body: { type: 'slack', value: tagged } })).status).toBe(201);
    await toggle(flag, 'production', true);

    const [entry] = await waitForLog(addonId);
    expect(entry).toMatchObject({ state: 'success', stateDetails: 'All (3) Slack client calls were successful.' });
    expect(entry!.details).toEqual({ channels: [tagged, first, second], message: expect.stringContaining(`|${flag}>*`) });
    // The channel that failed once got it twice (the failed try and the retry); the others once.
    expect(await receivedAt(`${SLACK}#${first}`)).toHaveLength(1);
    expect(await receivedAt(`${SLACK}#${tagged}`)).toHaveLength(1);
    expect(await receivedAt(`${SLACK}#${second}`)).toHaveLength(2);
    const [posted] = await receivedAt(`${SLACK}#${first}`);
    expect(posted!.headers.authorization).toBe('Bearer xoxb-s3cret');
    expect(JSON.parse(posted!.body)).toMatchObject({ channel: first, unfurl_links: false });
    const [row] = await deliveryRows(addonId);
    expect(row).toMatchObject({ status: 'sent', attempts: 2 });
    expect(Object.keys(JSON.parse(row!.targets)).sort()).toEqual([first, second, tagged].sort());
    expect(JSON.stringify(entry)).not.toContain('xoxb-s3cret');
    expect(logs.messages()).toContain('integration delivery will be retried');
  });

  it('a channel that refuses for good (4xx) is not retried; the others count as a partial success', async () => {
    const [good, gone] = [unique('good'), unique('gone')];
    await scriptReceiver(`${SLACK}#${gone}`, [404]);
    const flag = unique('slack-partial');
    await createFlag(flag);
    const addonId = await createSlackApp(`${good},${gone}`);
    await toggle(flag, 'production', true);
    const [entry] = await waitForLog(addonId);
    expect(entry).toMatchObject({
      state: 'successWithErrors',
      stateDetails: 'Some (1 of 2) Slack client calls failed. Errors: An HTTP error occurred: status code 404',
    });
    await sleep(300);
    expect(await receivedAt(`${SLACK}#${gone}`)).toHaveLength(1);
    expect(await receivedAt(`${SLACK}#${good}`)).toHaveLength(1);
    expect((await deliveryRows(addonId))[0]).toMatchObject({ status: 'sent', attempts: 1 });
  });

  it('no channel at all: the delivery fails with the reason, nothing is posted', async () => {
    const flag = unique('slack-none');
    await createFlag(flag);
    const addonId = await createSlackApp('');
    await toggle(flag, 'production', true);
    const [entry] = await waitForLog(addonId);
    expect(entry).toMatchObject({
      state: 'failed',
      stateDetails: 'No Slack channels found for event feature-environment-enabled.',
      details: { channels: [], message: '' },
    });
  });
});

describe('pruning the delivery log and records (cron)', () => {
  it('keeps the newest entries of each log and finished deliveries younger than a day; never a pending one', async () => {
    const logs = captureLogs();
    const keep = INTEGRATION_LOG_KEPT;
    const big = await createWebhook(`${unique('prune')}.receiver.test/x`);
    const small = await createWebhook(`${unique('prune')}.receiver.test/y`);
    const insertLog = (addonId: number, n: number) =>
      env.DB.batch(
        Array.from({ length: n }, (_, i) =>
          env.DB.prepare(
            "INSERT INTO integration_events (integration_id, state, state_details, event, details) VALUES (?, 'success', ?, '{}', '{}')",
          ).bind(addonId, `entry ${i}`),
        ),
      );
    await insertLog(big, keep + 7);
    await insertLog(small, 3);
    const old = new Date(Date.now() - 25 * 60 * 60 * 1000).toISOString();
    const recent = new Date(Date.now() - 60 * 60 * 1000).toISOString();
    const rows: [number, string, string][] = [
      [1_000_001, 'sent', old],
      [1_000_002, 'failed', old],
      [1_000_003, 'pending', old],
      [1_000_004, 'sending', old],
      [1_000_005, 'sent', recent],
    ];
    await env.DB.batch(
      rows.map(([eventId, status, createdAt]) =>
        env.DB.prepare('INSERT INTO addon_deliveries (addon_id, event_id, status, queued_at, created_at) VALUES (?, ?, ?, ?, ?)').bind(
          big,
          eventId,
          status,
          createdAt,
          createdAt,
        ),
      ),
    );

    const [outcome] = await runScheduledJobs(env, new Date(), [pruneIntegrationDeliveries]);
    expect(outcome).toMatchObject({ name: 'prune-integration-deliveries', ok: true, summary: { logEntries: 7, deliveries: 2 } });

    const bigLog = (
      await env.DB.prepare('SELECT state_details FROM integration_events WHERE integration_id = ? ORDER BY id')
        .bind(big)
        .all<{ state_details: string }>()
    ).results;
    expect(bigLog).toHaveLength(keep);
    expect(bigLog[0]!.state_details).toBe('entry 7');
    expect(bigLog.at(-1)!.state_details).toBe(`entry ${keep + 6}`);
    expect(await deliveryLog(small)).toHaveLength(3);
    expect((await deliveryRows(big)).map((row) => row.event_id)).toEqual([1_000_003, 1_000_004, 1_000_005]);
    // The UI's first page still shows the newest entries.
    expect((await deliveryLog(big))[0]!.stateDetails).toBe(`entry ${keep + 6}`);

    // A second run has nothing left to do.
    const [again] = await runScheduledJobs(env, new Date(), [pruneIntegrationDeliveries]);
    expect(again!.summary).toMatchObject({ logEntries: 0, deliveries: 0 });
    expect(logs.messages()).toContain('scheduled job done');
  });
});

describe('outbound targets and backoff', () => {
  it('allows public http(s) hosts only, unless private targets are allowed', () => {
    for (const url of [
      'https://hooks.example.com/x',
      'http://203.0.113.9/x',
      'https://[2001:db8::1]/x',
      'https://hooks.example.com./x',
      'http://3405803785/x',
    ])
      expect(refusedTarget(url, false)).toBeNull();
    for (const url of [
      'http://localhost/x',
      'http://api.localhost/x',
      'http://127.0.0.1/x',
      'http://0x7f.1/x',
      'http://10.1.2.3/x',
      'http://172.20.0.1/x',
      'http://192.168.1.1/x',
      'http://169.254.169.254/latest',
      'http://[::1]/x',
      'http://[fd00::1]/x',
      'http://[::ffff:127.0.0.1]/x',
      // Every way of writing a loopback or private IPv4 address, and names with a trailing dot.
      'http://2130706433/x',
      'http://0177.0.0.1/x',
      'http://0x7f000001/x',
      'http://127.1/x',
      'http://0/x',
      'http://0x0a.0x01.0x02.0x03/x',
      'http://3232235777/x',
      'http://127.0.0.1./x',
      'http://localhost./x',
      'http://LOCALHOST/x',
      'http://api.localhost./x',
      'http://printer.local./x',
      'http://[::ffff:7f00:1]/x',
      'http://[::ffff:10.0.0.1]/x',
      'http://[::ffff:0:7f00:1]/x',
      'http://[::127.0.0.1]/x',
      'http://[64:ff9b::7f00:1]/x',
      'http://[::]/x',
      'http://[fe80::1]/x',
      'http://[ff02::1]/x',
      'http://[0:0:0:0:0:0:0:1]/x',
    ])
      expect(refusedTarget(url, false), url).toMatch(/^Refused to call/);
    expect(refusedTarget('ftp://hooks.example.com/x', false)).toMatch(/^Only http and https/);
    expect(refusedTarget('not a url', true)).toBe('The URL is not valid.');
    expect(refusedTarget('http://127.0.0.1:8080/x', true)).toBeNull();
  });

  it('backs off exponentially from the configured base, capped at 15 minutes', () => {
    expect([1, 2, 3, 4].map((attempt) => retryDelaySeconds({}, attempt))).toEqual([10, 20, 40, 80]);
    expect(retryDelaySeconds({ INTEGRATIONS_RETRY_DELAY_SECONDS: '3' }, 2)).toBe(6);
    expect(retryDelaySeconds({}, 20)).toBe(900);
  });
});
