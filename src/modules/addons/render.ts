/**
 * What each provider sends for an audit event: the HTTP requests, and what the delivery log
 * shows of them. Secrets (sensitive parameters) go into headers and URLs only, never into
 * the log.
 */
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

export interface Outgoing {
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

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '/': '&#x2F;',
  '`': '&#x60;',
  '=': '&#x3D;',
};

function lookup(context: Record<string, unknown>, path: string): unknown {
  if (path === '.') return context;
  let value: unknown = context;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return Array.isArray(value) ? value.map(text).join(',') : '[object Object]';
  return String(value);
}

/**
 * Mustache variables as Unleash's templates use them: `{{a.b}}` HTML-escaped, `{{{a.b}}}` and
 * `{{& a.b}}` as is. Sections and partials are not supported (left as written).
 */
export function renderTemplate(template: string, context: Record<string, unknown>): string {
  return template.replace(
    /\{\{\{\s*([\w.]+)\s*\}\}\}|\{\{\s*(&?)\s*([\w.]+)\s*\}\}/g,
    (_match, raw: string | undefined, amp: string, escaped: string | undefined) => {
      if (raw !== undefined) return text(lookup(context, raw));
      const value = text(lookup(context, escaped!));
      return amp === '&' ? value : value.replace(/[&<>"'`=/]/g, (character) => ESCAPES[character]!);
    },
  );
}

function featureUrl(baseUrl: string, event: AddonEvent): string | undefined {
  if (!event.featureName) return undefined;
  return `${baseUrl}/projects/${encodeURIComponent(event.project ?? 'default')}/features/${encodeURIComponent(event.featureName)}`;
}

/** A one-line markdown summary of the event (Unleash formats each event type in more detail). */
export function markdownOf(event: AddonEvent, baseUrl: string): string {
  const url = featureUrl(baseUrl, event);
  const flag = event.featureName ? (url ? `*<${url}|${event.featureName}>*` : `*${event.featureName}*`) : undefined;
  const where = [event.environment ? `in the *${event.environment}* environment` : '', event.project ? `in project *${event.project}*` : '']
    .filter(Boolean)
    .join(' ');
  switch (event.type) {
    case 'feature-environment-enabled':
      return `*${event.createdBy}* enabled ${flag} ${where}`.trim();
    case 'feature-environment-disabled':
      return `*${event.createdBy}* disabled ${flag} ${where}`.trim();
    case 'feature-created':
      return `*${event.createdBy}* created a new feature flag ${flag} ${where}`.trim();
    case 'feature-archived':
      return `*${event.createdBy}* archived ${flag} ${where}`.trim();
    default:
      return `*${event.createdBy}* triggered *${event.type}*${flag ? ` on ${flag}` : ''}${where ? ` ${where}` : ''}`;
  }
}

function customHeaders(raw: unknown, warnings: string[]): Record<string, string> {
  if (typeof raw !== 'string' || raw.length <= 1) return {};
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    return Object.fromEntries(Object.entries(parsed).map(([key, value]) => [key, text(value)]));
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

async function gzip(body: string): Promise<Uint8Array> {
  const stream = new Blob([body]).stream().pipeThrough(new CompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export async function render(addon: AddonRow, event: AddonEvent, baseUrl: string): Promise<Rendered> {
  const warnings: string[] = [];
  const headers = () => customHeaders(addon.parameters.customHeaders, warnings);
  const markdown = markdownOf(event, baseUrl);
  switch (addon.provider) {
    case 'webhook': {
      const url = stringParam(addon, 'url') ?? '';
      const contentType = stringParam(addon, 'contentType') ?? 'application/json';
      const template = stringParam(addon, 'bodyTemplate');
      const body =
        template !== undefined && template.length > 1
          ? renderTemplate(template, { event, eventJson: JSON.stringify(JSON.stringify(event)), eventMarkdown: markdown })
          : JSON.stringify(event);
      const authorization = stringParam(addon, 'authorization');
      return {
        label: 'Webhook request',
        requests: [
          {
            url,
            init: {
              method: 'POST',
              headers: { 'Content-Type': contentType, ...(authorization ? { Authorization: authorization } : {}), ...headers() },
              body,
            },
          },
        ],
        warnings,
        details: { ...shownUrl(addon, url), contentType, body: template !== undefined && template.length > 1 ? body : event },
      };
    }
    case 'teams': {
      const url = stringParam(addon, 'url') ?? '';
      const body = {
        themeColor: '0076D7',
        summary: 'Message',
        sections: [
          {
            activityTitle: markdown,
            activitySubtitle: 'Unleash notification update',
            facts: [
              { name: 'User', value: event.createdBy },
              { name: 'Action', value: event.type },
            ],
          },
        ],
        potentialAction: [
          { '@type': 'OpenUri', name: 'Go to feature', targets: [{ os: 'default', uri: featureUrl(baseUrl, event) ?? baseUrl }] },
        ],
      };
      return {
        label: 'Teams webhook request',
        requests: [
          { url, init: { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers() }, body: JSON.stringify(body) } },
        ],
        warnings,
        details: { ...shownUrl(addon, url), body },
      };
    }
    case 'datadog': {
      const url = stringParam(addon, 'url') ?? 'https://api.datadoghq.com/api/v1/events';
      const template = stringParam(addon, 'bodyTemplate');
      const textBody = template !== undefined && template.length > 1 ? renderTemplate(template, { event }) : `%%% \n ${markdown} \n %%% `;
      const sourceTypeName = stringParam(addon, 'sourceTypeName');
      const body = {
        text: textBody,
        title: 'Unleash notification update',
        tags: event.tags.map((tag) => `${tag.type}:${tag.value}`),
        ...(sourceTypeName ? { source_type_name: sourceTypeName } : {}),
      };
      return {
        label: 'Datadog Events API request',
        requests: [
          {
            url,
            init: {
              method: 'POST',
              headers: { 'Content-Type': 'application/json', 'DD-API-KEY': stringParam(addon, 'apiKey') ?? '', ...headers() },
              body: JSON.stringify(body),
            },
          },
        ],
        warnings,
        details: { ...shownUrl(addon, url), body },
      };
    }
    case 'new-relic': {
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
          {
            url,
            init: {
              method: 'POST',
              headers: {
                'Api-Key': stringParam(addon, 'licenseKey') ?? '',
                'Content-Type': 'application/json',
                'Content-Encoding': 'gzip',
                ...headers(),
              },
              body: await gzip(JSON.stringify(body)),
            },
          },
        ],
        warnings,
        details: { ...shownUrl(addon, url), body },
      };
    }
    case 'slack-app': {
      const token = stringParam(addon, 'accessToken');
      const channels = slackChannels(addon, event, 'defaultChannels');
      const base = { label: 'Slack API request', warnings, details: { message: markdown, channels } };
      if (!token) return { ...base, requests: [], failure: 'No access token provided.' };
      if (channels.length === 0) return { ...base, requests: [], failure: `No Slack channels found for event ${event.type}.` };
      const text = markdown.slice(0, 3000);
      const url = featureUrl(baseUrl, event);
      const blocks = [
        { type: 'section', text: { type: 'mrkdwn', text } },
        ...(url ? [{ type: 'actions', elements: [{ type: 'button', url, text: { type: 'plain_text', text: 'Open in Unleash' } }] }] : []),
      ];
      return {
        ...base,
        requests: channels.map((channel) => ({
          url: 'https://slack.com/api/chat.postMessage',
          init: {
            method: 'POST',
            headers: { 'Content-Type': 'application/json; charset=utf-8', Authorization: `Bearer ${token}` },
            body: JSON.stringify({ channel, text, blocks, unfurl_links: false }),
          },
        })),
      };
    }
    case 'slack': {
      const url = stringParam(addon, 'url') ?? '';
      const channels = slackChannels(addon, event, 'defaultChannel');
      const username = stringParam(addon, 'username') ?? 'Unleash';
      const icon = stringParam(addon, 'emojiIcon') ?? ':unleash:';
      const extra = headers();
      return {
        label: 'Slack webhook request',
        requests: (channels.length > 0 ? channels : [undefined]).map((channel) => ({
          url,
          init: {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', ...extra },
            body: JSON.stringify({ username, icon_emoji: icon, text: markdown, ...(channel ? { channel: `#${channel}` } : {}) }),
          },
        })),
        warnings,
        details: { message: markdown, channels },
      };
    }
    default:
      return { label: 'Request', requests: [], warnings, details: {}, failure: `Unknown addon provider ${addon.provider}` };
  }
}
