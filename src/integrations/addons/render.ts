/**
 * What each provider sends for an audit event: the HTTP requests, and what the delivery log
 * shows of them. Secrets (sensitive parameters) go into headers and URLs only, never into
 * the log.
 */
import Mustache from 'mustache';
import { formatEvent, NO_ESCAPE } from './format';
import { sensitiveParameters } from './service';
import type { AddonRow } from './store';

/** An audit event as Unleash hands it to addons (and as `GET /api/admin/events` shows it). */
export interface AddonEvent {
  id: number;
  type: string;
  createdBy: string;
  createdAt: string;
  createdByUserId: number | null;
  data: unknown;
  preData: unknown;
  tags: { value: string; type: string }[];
  featureName: string | null;
  project: string | null;
  environment: string | null;
}

interface Outgoing {
  /** Which target this is (a Slack channel; `default` for a provider's one URL): what a retry skips once it answered 2xx. */
  target: string;
  url: string;
  init: { method: 'POST'; headers: Record<string, string>; body: string | Uint8Array };
}

export interface Rendered {
  requests: Outgoing[];
  /** Problems that did not stop the delivery (state `successWithErrors`). */
  warnings: string[];
  /** Shown in the delivery log (`details`). */
  details: Record<string, unknown>;
  /** How the log names the provider's endpoint ("Webhook request", "Datadog Events API request"). */
  label: string;
  /** A reason not to send at all (recorded as failed). */
  failure?: string;
}

/**
 * A body template, rendered with Mustache as Unleash renders it: variables (`{{event.type}}`,
 * `{{{eventJson}}}`, `{{& x}}`), sections (`{{#event.data.enabled}}…{{/event.data.enabled}}`,
 * lists repeat them), inverted sections (`{{^x}}…{{/x}}`) and comments. No HTML escaping:
 * Unleash 6.10.1 turns Mustache's escaping off before it renders a template (its message
 * formatter sets it globally), so `{{x}}` and `{{{x}}}` send the same characters. Partials are
 * not available (there is nowhere to define one).
 */
function renderTemplate(template: string, context: Record<string, unknown>): string {
  return Mustache.render(template, context, {}, NO_ESCAPE);
}

/** A template that does not parse (an unclosed section): the reason, for the log. */
function templateFailure(template: string): string | undefined {
  try {
    Mustache.parse(template);
    return undefined;
  } catch (error) {
    return `Could not render the body template: ${error instanceof Error ? error.message : String(error)}`;
  }
}

function customHeaders(raw: unknown, warnings: string[]): Record<string, string> {
  if (typeof raw !== 'string' || raw.length <= 1) return {};
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    return Object.fromEntries(
      Object.entries(parsed).map(([key, value]) => [
        key,
        value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value),
      ]),
    );
  } catch {
    warnings.push('Could not parse the JSON in the customHeaders parameter.');
    return {};
  }
}

/** The URL as the log may show it: not at all when it is a secret of the provider. */
function shownUrl(addon: AddonRow, url: string): Record<string, unknown> {
  return sensitiveParameters(addon.provider).has('url') ? {} : { url };
}

function stringParam(addon: AddonRow, name: string): string | undefined {
  const value = addon.parameters[name];
  return value === undefined || value === '' ? undefined : String(value);
}

function slackChannels(addon: AddonRow, event: AddonEvent, parameter: string): string[] {
  const tagged = event.tags.filter((tag) => tag.type === 'slack').map((tag) => tag.value);
  const defaults = (stringParam(addon, parameter) ?? '')
    .split(',')
    .map((channel) => channel.trim())
    .filter(Boolean);
  return [...new Set([...tagged, ...defaults])];
}

/** Slack shows at most this many characters of a message section. */
const SLACK_MAX_LENGTH = 3000;
const SLACK_POST_MESSAGE = 'https://slack.com/api/chat.postMessage';

async function gzip(body: string): Promise<Uint8Array> {
  const stream = new Blob([body]).stream().pipeThrough(new CompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

const DEFAULT_TARGET = 'default';

function post(url: string, headers: Record<string, string>, body: string | Uint8Array, target = DEFAULT_TARGET): Outgoing {
  return { target, url, init: { method: 'POST', headers, body } };
}

export async function render(addon: AddonRow, event: AddonEvent, baseUrl: string): Promise<Rendered> {
  const warnings: string[] = [];
  const headers = () => customHeaders(addon.parameters.customHeaders, warnings);
  switch (addon.provider) {
    case 'webhook': {
      const url = stringParam(addon, 'url') ?? '';
      const contentType = stringParam(addon, 'contentType') ?? 'application/json';
      const template = stringParam(addon, 'bodyTemplate');
      const templated = template !== undefined && template.length > 1;
      const broken = templated ? templateFailure(template) : undefined;
      if (broken !== undefined) return { label: 'Webhook request', requests: [], warnings, details: shownUrl(addon, url), failure: broken };
      const body = templated
        ? renderTemplate(template, {
            event,
            // Twice stringified, so that `{{{eventJson}}}` is a JSON string and `{{eventJson}}` still JSON.
            eventJson: JSON.stringify(JSON.stringify(event)),
            eventMarkdown: formatEvent(event, baseUrl, 'markdown').text,
          })
        : JSON.stringify(event);
      const authorization = stringParam(addon, 'authorization');
      return {
        label: 'Webhook request',
        requests: [
          post(url, { 'Content-Type': contentType, ...(authorization ? { Authorization: authorization } : {}), ...headers() }, body),
        ],
        warnings,
        details: { ...shownUrl(addon, url), contentType, body: templated ? body : event },
      };
    }
    case 'teams': {
      const url = stringParam(addon, 'url') ?? '';
      const { text, url: link } = formatEvent(event, baseUrl, 'markdown');
      const body = {
        themeColor: '0076D7',
        summary: 'Message',
        sections: [
          {
            activityTitle: text,
            activitySubtitle: 'Unleash notification update',
            facts: [
              { name: 'User', value: event.createdBy },
              { name: 'Action', value: event.type },
            ],
          },
        ],
        potentialAction: [{ '@type': 'OpenUri', name: 'Go to feature', targets: [{ os: 'default', uri: link }] }],
      };
      return {
        label: 'Teams webhook request',
        requests: [post(url, { 'Content-Type': 'application/json', ...headers() }, JSON.stringify(body))],
        warnings,
        // JSON.parse(JSON.stringify(…)): the log shows the body as sent (without an undefined `uri`).
        details: { ...shownUrl(addon, url), body: JSON.parse(JSON.stringify(body)) },
      };
    }
    case 'datadog': {
      const url = stringParam(addon, 'url') ?? 'https://api.datadoghq.com/api/v1/events';
      const template = stringParam(addon, 'bodyTemplate');
      const templated = template !== undefined && template.length > 1;
      const broken = templated ? templateFailure(template) : undefined;
      if (broken !== undefined)
        return { label: 'Datadog Events API request', requests: [], warnings, details: shownUrl(addon, url), failure: broken };
      const sourceTypeName = stringParam(addon, 'sourceTypeName');
      const body = {
        text: templated ? renderTemplate(template, { event }) : `%%% \n ${formatEvent(event, baseUrl, 'markdown').text} \n %%% `,
        title: 'Unleash notification update',
        tags: event.tags.map((tag) => `${tag.type}:${tag.value}`),
        ...(sourceTypeName ? { source_type_name: sourceTypeName } : {}),
      };
      return {
        label: 'Datadog Events API request',
        requests: [
          post(
            url,
            { 'Content-Type': 'application/json', 'DD-API-KEY': stringParam(addon, 'apiKey') ?? '', ...headers() },
            JSON.stringify(body),
          ),
        ],
        warnings,
        details: { ...shownUrl(addon, url), body },
      };
    }
    case 'new-relic': {
      // Unleash sends the event's fields (its body template is offered but not used).
      const url = stringParam(addon, 'url') ?? '';
      const body = {
        eventType: 'UnleashServiceEvent',
        unleashEventType: event.type,
        featureName: event.featureName,
        environment: event.environment,
        createdBy: event.createdBy,
        createdByUserId: event.createdByUserId,
        createdAt: Date.parse(event.createdAt),
        ...(event.data !== null && typeof event.data === 'object' ? (event.data as Record<string, unknown>) : {}),
      };
      return {
        label: 'New Relic Events API request',
        requests: [
          post(
            url,
            {
              'Api-Key': stringParam(addon, 'licenseKey') ?? '',
              'Content-Type': 'application/json',
              'Content-Encoding': 'gzip',
              ...headers(),
            },
            await gzip(JSON.stringify(body)),
          ),
        ],
        warnings,
        details: { ...shownUrl(addon, url), body },
      };
    }
    case 'slack-app': {
      const token = stringParam(addon, 'accessToken');
      const channels = slackChannels(addon, event, 'defaultChannels');
      const label = 'Slack API request';
      if (!token) return { label, requests: [], warnings, details: { channels: [], message: '' }, failure: 'No access token provided.' };
      if (channels.length === 0)
        return {
          label,
          requests: [],
          warnings,
          details: { channels: [], message: '' },
          failure: `No Slack channels found for event ${event.type}.`,
        };
      const { text: formatted, url } = formatEvent(event, baseUrl, 'slack');
      const text = formatted.slice(0, SLACK_MAX_LENGTH);
      const message = text.length < formatted.length ? `${formatted} (trimmed to ${SLACK_MAX_LENGTH} characters)` : formatted;
      const blocks: unknown[] = [{ type: 'section', text: { type: 'mrkdwn', text } }];
      if (url)
        blocks.push({
          type: 'actions',
          elements: [
            { type: 'button', url, text: { type: 'plain_text', text: 'Open in Unleash' }, value: 'featureToggle', style: 'primary' },
          ],
        });
      return {
        label,
        requests: channels.map((channel) =>
          post(
            SLACK_POST_MESSAGE,
            { 'Content-Type': 'application/json; charset=utf-8', Authorization: `Bearer ${token}` },
            JSON.stringify({ channel, text, blocks, unfurl_links: false }),
            channel,
          ),
        ),
        warnings,
        details: { channels, message },
      };
    }
    case 'slack': {
      const url = stringParam(addon, 'url') ?? '';
      const tagged = event.tags.filter((tag) => tag.type === 'slack').map((tag) => tag.value);
      const channels = tagged.length > 0 ? tagged : [stringParam(addon, 'defaultChannel') ?? ''];
      const username = stringParam(addon, 'username') ?? 'Unleash';
      const icon = stringParam(addon, 'emojiIcon') ?? ':unleash:';
      const { text: formatted, url: link } = formatEvent(event, baseUrl, 'slack');
      const text = formatted.slice(0, SLACK_MAX_LENGTH);
      const extra = headers();
      const button = {
        name: 'featureToggle',
        text: 'Open in Unleash',
        type: 'button',
        value: 'featureToggle',
        style: 'primary',
        url: link,
      };
      return {
        label: 'Slack webhook request',
        requests: channels.map((channel) =>
          post(
            url,
            { 'Content-Type': 'application/json', ...extra },
            JSON.stringify({ username, icon_emoji: icon, text, channel: `#${channel}`, attachments: [{ actions: [button] }] }),
            channel,
          ),
        ),
        warnings,
        details: {
          ...shownUrl(addon, url),
          channels,
          username,
          message: text.length < formatted.length ? `${formatted} (trimmed to ${SLACK_MAX_LENGTH} characters)` : formatted,
        },
      };
    }
    default:
      return { label: 'Request', requests: [], warnings, details: {}, failure: `Unknown addon provider ${addon.provider}` };
  }
}
