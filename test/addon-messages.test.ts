import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '../src/db/client';
import { addonEvent } from '../src/integrations/addons/delivery';
import { render } from '../src/integrations/addons/render';
import type { AddonRow } from '../src/integrations/addons/store';
import { call } from './support/http';

const BASE_URL = 'https://unleash.example.com';

async function ok(response: Promise<Response>, status = 200) {
  const answered = await response;
  if (answered.status !== status) throw new Error(`${answered.status} ${await answered.text()}`);
  return answered.status === 204 ? null : answered.json().catch(() => null);
}

async function eventOf(type: string, featureName: string) {
  const row = await env.DB.prepare('SELECT id FROM events WHERE type = ? AND feature_name = ? ORDER BY id DESC LIMIT 1')
    .bind(type, featureName)
    .first<{ id: number }>();
  return (await addonEvent(getDb(env), row!.id))!;
}

function addon(provider: string, parameters: Record<string, unknown>): AddonRow {
  return {
    id: 1,
    provider,
    description: null,
    enabled: true,
    parameters,
    events: [],
    projects: [],
    environments: [],
    createdAt: '',
  } as AddonRow;
}

/** The flag's events, written by the real operations: created, on and off in production, a strategy changed, archived. */
async function flagHistory(flag: string) {
  await ok(call('POST', '/api/admin/projects/default/features', { body: { name: flag } }), 201);
  await ok(call('POST', `/api/admin/projects/default/features/${flag}/environments/production/on`));
  await ok(call('POST', `/api/admin/projects/default/features/${flag}/environments/production/off`));
  const strategy = (await ok(
    call('POST', `/api/admin/projects/default/features/${flag}/environments/production/strategies`, {
      body: { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'default', groupId: flag } },
    }),
  )) as { id: string };
  await ok(
    call('PUT', `/api/admin/projects/default/features/${flag}/environments/production/strategies/${strategy.id}`, {
      body: {
        name: 'flexibleRollout',
        parameters: { rollout: '75', stickiness: 'default', groupId: flag },
        constraints: [{ contextName: 'userId', operator: 'IN', values: ['1', '2'] }],
      },
    }),
  );
  await ok(call('DELETE', `/api/admin/projects/default/features/${flag}`), 202);
}

/** What Unleash 6.10.1 writes for each event (checked against its formatter on the same events), in Slack's and in markdown's links. */
function expectedMessages(flag: string) {
  const flagUrl = `${BASE_URL}/projects/default/features/${flag}`;
  const slackFlag = `*<${flagUrl}|${flag}>*`;
  const mdFlag = `*[${flag}](${flagUrl})*`;
  const slackProject = `*<${BASE_URL}/projects/default|default>*`;
  const mdProject = `*[default](${BASE_URL}/projects/default)*`;
  const change =
    'by updating strategy *flexibleRollout* in *production* rollout from 50% to 75%; constraints from empty set of constraints to [userId is one of (1,2)]';
  return {
    'feature-created': {
      url: flagUrl,
      slack: `*admin* created ${slackFlag} in project ${slackProject}`,
      md: `*admin* created ${mdFlag} in project ${mdProject}`,
    },
    'feature-environment-enabled': {
      url: flagUrl,
      slack: `*admin* enabled ${slackFlag} for the *production* environment in project ${slackProject}`,
      md: `*admin* enabled ${mdFlag} for the *production* environment in project ${mdProject}`,
    },
    'feature-environment-disabled': {
      url: flagUrl,
      slack: `*admin* disabled ${slackFlag} for the *production* environment in project ${slackProject}`,
      md: `*admin* disabled ${mdFlag} for the *production* environment in project ${mdProject}`,
    },
    'feature-strategy-update': {
      url: flagUrl,
      slack: `*admin* updated ${slackFlag} in project ${slackProject} ${change}`,
      md: `*admin* updated ${mdFlag} in project ${mdProject} ${change}`,
    },
    // An archived flag links to the project's archive, and its name is not a link.
    'feature-archived': {
      url: `${BASE_URL}/projects/default/archive`,
      slack: `*admin* archived *${flag}* in project ${slackProject}`,
      md: `*admin* archived *${flag}* in project ${mdProject}`,
    },
  };
}

async function rendered(provider: string, parameters: Record<string, unknown>, event: Awaited<ReturnType<typeof eventOf>>) {
  return render(addon(provider, parameters), event, BASE_URL);
}

async function gunzip(bytes: Uint8Array): Promise<string> {
  return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text();
}

describe('messages as Unleash 6.10.1 renders them', () => {
  const flag = 'msg-checkout';
  const types = [
    'feature-created',
    'feature-environment-enabled',
    'feature-environment-disabled',
    'feature-strategy-update',
    'feature-archived',
  ] as const;

  beforeAll(() => flagHistory(flag));

  it('Slack App: the text with Slack links, a section block and an "Open in Unleash" button, per channel', async () => {
    for (const type of types) {
      const want = expectedMessages(flag)[type];
      const event = await eventOf(type, flag);
      const out = await rendered('slack-app', { accessToken: 'xoxb-1', defaultChannels: 'general, ops' }, event);
      expect(out.requests.map((request) => [request.target, request.url])).toEqual([
        ['general', 'https://slack.com/api/chat.postMessage'],
        ['ops', 'https://slack.com/api/chat.postMessage'],
      ]);
      expect(out.requests[0]!.init.headers).toEqual({ 'Content-Type': 'application/json; charset=utf-8', Authorization: 'Bearer xoxb-1' });
      expect(JSON.parse(out.requests[1]!.init.body as string), type).toEqual({
        channel: 'ops',
        text: want.slack,
        blocks: [
          { type: 'section', text: { type: 'mrkdwn', text: want.slack } },
          {
            type: 'actions',
            elements: [
              {
                type: 'button',
                url: want.url,
                text: { type: 'plain_text', text: 'Open in Unleash' },
                value: 'featureToggle',
                style: 'primary',
              },
            ],
          },
        ],
        unfurl_links: false,
      });
      expect(out.details).toEqual({ channels: ['general', 'ops'], message: want.slack });
    }
  });

  it('Microsoft Teams: the markdown text as activity title, user and action facts, a link to the flag', async () => {
    for (const type of types) {
      const want = expectedMessages(flag)[type];
      const out = await rendered('teams', { url: 'https://teams.receiver.test/hook' }, await eventOf(type, flag));
      expect(out.requests[0]!.init.headers).toEqual({ 'Content-Type': 'application/json' });
      expect(JSON.parse(out.requests[0]!.init.body as string), type).toEqual({
        themeColor: '0076D7',
        summary: 'Message',
        sections: [
          {
            activityTitle: want.md,
            activitySubtitle: 'Unleash notification update',
            facts: [
              { name: 'User', value: 'admin' },
              { name: 'Action', value: type },
            ],
          },
        ],
        potentialAction: [{ '@type': 'OpenUri', name: 'Go to feature', targets: [{ os: 'default', uri: want.url }] }],
      });
    }
  });

  it("Datadog: the markdown text between %%% markers, Unleash's title, the flag's tags, the source type", async () => {
    for (const type of types) {
      const want = expectedMessages(flag)[type];
      const out = await rendered('datadog', { apiKey: 'dd-key', sourceTypeName: 'unleash' }, await eventOf(type, flag));
      expect(out.requests[0]!.url).toBe('https://api.datadoghq.com/api/v1/events');
      expect(out.requests[0]!.init.headers).toEqual({ 'Content-Type': 'application/json', 'DD-API-KEY': 'dd-key' });
      expect(JSON.parse(out.requests[0]!.init.body as string), type).toEqual({
        text: `%%% \n ${want.md} \n %%% `,
        title: 'Unleash notification update',
        tags: [],
        source_type_name: 'unleash',
      });
    }
    const event = { ...(await eventOf('feature-created', flag)), tags: [{ type: 'datadog', value: 'team-a' }] };
    expect(JSON.parse((await rendered('datadog', { apiKey: 'k' }, event)).requests[0]!.init.body as string).tags).toEqual([
      'datadog:team-a',
    ]);
  });

  it('Slack (deprecated webhook): one post per tagged channel, else the default one, with the button attachment', async () => {
    const want = expectedMessages(flag)['feature-environment-enabled'];
    const event = await eventOf('feature-environment-enabled', flag);
    const out = await rendered('slack', { url: 'https://hooks.slack.receiver.test/T1', defaultChannel: 'general' }, event);
    expect(out.requests.map((request) => request.target)).toEqual(['general']);
    expect(JSON.parse(out.requests[0]!.init.body as string)).toEqual({
      username: 'Unleash',
      icon_emoji: ':unleash:',
      text: want.slack,
      channel: '#general',
      attachments: [
        {
          actions: [
            { name: 'featureToggle', text: 'Open in Unleash', type: 'button', value: 'featureToggle', style: 'primary', url: want.url },
          ],
        },
      ],
    });
    expect(out.details).toEqual({ channels: ['general'], username: 'Unleash', message: want.slack });
    const tagged = await rendered(
      'slack',
      { url: 'https://hooks.slack.receiver.test/T1', defaultChannel: 'general' },
      {
        ...event,
        tags: [
          { type: 'slack', value: 'a' },
          { type: 'simple', value: 'x' },
          { type: 'slack', value: 'b' },
        ],
      },
    );
    expect(tagged.requests.map((request) => JSON.parse(request.init.body as string).channel)).toEqual(['#a', '#b']);
  });

  it("New Relic: the event's fields and data, gzip-compressed, with the license key", async () => {
    const event = await eventOf('feature-environment-enabled', flag);
    const out = await rendered('new-relic', { url: 'https://insights.receiver.test/v1/accounts/1/events', licenseKey: 'nr-key' }, event);
    expect(out.requests[0]!.init.headers).toEqual({ 'Api-Key': 'nr-key', 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    expect(JSON.parse(await gunzip(out.requests[0]!.init.body as Uint8Array))).toEqual({
      eventType: 'UnleashServiceEvent',
      unleashEventType: 'feature-environment-enabled',
      featureName: flag,
      environment: 'production',
      createdBy: 'admin',
      createdByUserId: event.createdByUserId,
      createdAt: Date.parse(event.createdAt),
    });
    // An event with data (an on/off event has none, as in 6.10.1): its fields follow.
    const created = await eventOf('feature-created', flag);
    const withData = await rendered(
      'new-relic',
      { url: 'https://insights.receiver.test/v1/accounts/1/events', licenseKey: 'nr-key' },
      created,
    );
    const sent = JSON.parse(await gunzip(withData.requests[0]!.init.body as Uint8Array));
    expect(sent).toMatchObject({ eventType: 'UnleashServiceEvent', unleashEventType: 'feature-created', featureName: flag });
    expect(sent).toMatchObject(created.data as Record<string, unknown>);
    expect(Object.keys(created.data as Record<string, unknown>).length).toBeGreaterThan(0);
  });

  it("a webhook's {{eventMarkdown}} is the markdown text; without a template the body is the event", async () => {
    for (const type of types) {
      const event = await eventOf(type, flag);
      const templated = await rendered('webhook', { url: 'https://hooks.receiver.test/x', bodyTemplate: '{{eventMarkdown}}' }, event);
      expect(templated.requests[0]!.init.body, type).toBe(expectedMessages(flag)[type].md);
      const plain = await rendered('webhook', { url: 'https://hooks.receiver.test/x' }, event);
      expect(JSON.parse(plain.requests[0]!.init.body as string)).toEqual(event);
    }
  });
});

describe('webhook body templates (Mustache)', () => {
  const event = {
    id: 9,
    type: 'feature-tagged',
    createdBy: 'ann <ann@example.com>',
    createdAt: '2026-01-02T03:04:05.000Z',
    createdByUserId: 3,
    data: { type: 'team', value: 'a&b', enabled: true, list: [{ n: 'x' }, { n: 'y' }], empty: [] },
    preData: null,
    tags: [
      { type: 'team', value: 'a&b' },
      { type: 'slack', value: 'ops' },
    ],
    featureName: 'f"1',
    project: 'default',
    environment: null,
  };
  const body = async (template: string) =>
    (await rendered('webhook', { url: 'https://hooks.receiver.test/x', bodyTemplate: template }, event)).requests[0]!.init.body;

  it('sections repeat over lists and show for true values; inverted sections show for missing, false and empty', async () => {
    expect(await body('{{#event.tags}}[{{type}}:{{value}}]{{/event.tags}}')).toBe('[team:a&b][slack:ops]');
    expect(await body('{{#event.data.enabled}}on{{/event.data.enabled}}{{^event.data.enabled}}off{{/event.data.enabled}}')).toBe('on');
    expect(
      await body(
        '{{#event.environment}}in {{event.environment}}{{/event.environment}}{{^event.environment}}everywhere{{/event.environment}}',
      ),
    ).toBe('everywhere');
    expect(await body('{{^event.data.empty}}none{{/event.data.empty}}|{{#event.data.list}}{{n}},{{/event.data.list}}')).toBe('none|x,y,');
    expect(await body('{{! a comment }}{{event.type}}')).toBe('feature-tagged');
  });

  it('variables are not HTML-escaped, as in Unleash 6.10.1: {{x}}, {{{x}}} and {{& x}} send the same characters', async () => {
    expect(await body('{{event.createdBy}}|{{{event.createdBy}}}|{{& event.createdBy}}|{{event.data.value}}')).toBe(
      'ann <ann@example.com>|ann <ann@example.com>|ann <ann@example.com>|a&b',
    );
    // {{{eventJson}}} is the event as a JSON string: a template can embed it as a JSON value.
    const embedded = JSON.parse(String(await body('{"json": {{{eventJson}}}, "flag": "{{event.project}}"}')));
    expect(JSON.parse(embedded.json)).toEqual(event);
    expect(await body('{{event.missing.deep}}|{{event.data.list}}')).toBe('|[object Object],[object Object]');
  });

  it('a template that does not parse fails the delivery with the reason instead of sending', async () => {
    const out = await rendered('webhook', { url: 'https://hooks.receiver.test/x', bodyTemplate: '{{#event.tags}}open' }, event);
    expect(out.requests).toEqual([]);
    expect(out.failure).toMatch(/^Could not render the body template: Unclosed section "event.tags"/);
  });
});
