/**
 * The one-line message an integration sends for an audit event, as Unleash 6.10.1 words it
 * (its "feature event formatter"): a label, a text with markdown (or Slack) links into our UI,
 * and the UI address of what the event is about. Slack App uses Slack's `<url|text>` links; the
 * others (Teams, Datadog, the webhook's `eventMarkdown`) use `[text](url)`. Bold is `*…*`.
 *
 * The texts are Mustache templates over the event, rendered without HTML escaping, as Unleash
 * renders them.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- event data is JSON of any past shape, read loosely as Unleash's formatters read it */
import Mustache from 'mustache';

/** What the formatter needs of an event (the AddonEvent of render.ts has all of it). */
export interface FormattableEvent {
  type: string;
  createdBy: string;
  data: unknown;
  preData: unknown;
  featureName: string | null;
  project: string | null;
  environment: string | null;
}

export type LinkStyle = 'slack' | 'markdown';

export interface Formatted {
  label: string;
  text: string;
  url?: string;
}

/** No HTML escaping: the messages are markdown, not HTML (Unleash switches Mustache's escaping off too). */
export const NO_ESCAPE = { escape: (value: unknown) => String(value) };

const CHANGE_REQUEST_PATH = '/projects/{{event.project}}/change-requests/{{event.data.changeRequestId}}';
const FEATURE_PATH = '/projects/{{event.project}}/features/{{event.featureName}}';
const FOR_ENV = 'for the {{b}}{{event.environment}}{{b}} environment in project {{b}}{{project}}{{b}}';

/** [event type, label, message template, UI path template]: the texts of Unleash 6.10.1. */
const MESSAGES: readonly (readonly [string, string, string, string])[] = [
  [
    'addon-config-created',
    'Integration configuration created',
    '{{b}}{{user}}{{b}} created a new {{b}}{{event.data.provider}}{{b}} integration configuration',
    '/integrations',
  ],
  [
    'addon-config-deleted',
    'Integration configuration deleted',
    '{{b}}{{user}}{{b}} deleted a {{b}}{{event.preData.provider}}{{b}} integration configuration',
    '/integrations',
  ],
  [
    'addon-config-updated',
    'Integration configuration updated',
    '{{b}}{{user}}{{b}} updated a {{b}}{{event.preData.provider}}{{b}} integration configuration',
    '/integrations',
  ],
  ['api-token-created', 'API token created', '{{b}}{{user}}{{b}} created API token {{b}}{{event.data.username}}{{b}}', '/admin/api'],
  ['api-token-deleted', 'API token deleted', '{{b}}{{user}}{{b}} deleted API token {{b}}{{event.preData.username}}{{b}}', '/admin/api'],
  ['change-added', 'Change added', '{{b}}{{user}}{{b}} added a change to change request {{changeRequest}}', CHANGE_REQUEST_PATH],
  [
    'change-discarded',
    'Change discarded',
    '{{b}}{{user}}{{b}} discarded a change in change request {{changeRequest}}',
    CHANGE_REQUEST_PATH,
  ],
  ['change-edited', 'Change edited', '{{b}}{{user}}{{b}} edited a change in change request {{changeRequest}}', CHANGE_REQUEST_PATH],
  ['change-request-applied', 'Change request applied', '{{b}}{{user}}{{b}} applied change request {{changeRequest}}', CHANGE_REQUEST_PATH],
  [
    'change-request-approval-added',
    'Change request approval added',
    '{{b}}{{user}}{{b}} added an approval to change request {{changeRequest}}',
    CHANGE_REQUEST_PATH,
  ],
  [
    'change-request-approved',
    'Change request approved',
    '{{b}}{{user}}{{b}} approved change request {{changeRequest}}',
    CHANGE_REQUEST_PATH,
  ],
  [
    'change-request-cancelled',
    'Change request cancelled',
    '{{b}}{{user}}{{b}} cancelled change request {{changeRequest}}',
    CHANGE_REQUEST_PATH,
  ],
  ['change-request-created', 'Change request created', '{{b}}{{user}}{{b}} created change request {{changeRequest}}', CHANGE_REQUEST_PATH],
  [
    'change-request-discarded',
    'Change request discarded',
    '{{b}}{{user}}{{b}} discarded change request {{changeRequest}}',
    CHANGE_REQUEST_PATH,
  ],
  [
    'change-request-rejected',
    'Change request rejected',
    '{{b}}{{user}}{{b}} rejected change request {{changeRequest}}',
    CHANGE_REQUEST_PATH,
  ],
  [
    'change-request-sent-to-review',
    'Change request sent to review',
    '{{b}}{{user}}{{b}} sent to review change request {{changeRequest}}',
    CHANGE_REQUEST_PATH,
  ],
  [
    'change-request-scheduled',
    'Change request scheduled',
    '{{b}}{{user}}{{b}} scheduled change request {{changeRequest}} to be applied at {{event.data.scheduledDate}}.',
    CHANGE_REQUEST_PATH,
  ],
  [
    'change-request-scheduled-application-success',
    'Scheduled change request applied successfully',
    '{{b}}Successfully{{b}} applied the scheduled change request {{changeRequest}} by {{b}}{{user}}{{b}}.',
    CHANGE_REQUEST_PATH,
  ],
  [
    'change-request-scheduled-application-failure',
    'Scheduled change request failed',
    '{{b}}Failed{{b}} to apply the scheduled change request {{changeRequest}} by {{b}}{{user}}{{b}}.',
    CHANGE_REQUEST_PATH,
  ],
  [
    'change-request-schedule-suspended',
    'Change request suspended',
    'Change request {{changeRequest}} was suspended for the following reason: {{event.data.reason}}',
    CHANGE_REQUEST_PATH,
  ],
  ['context-field-created', 'Context field created', '{{b}}{{user}}{{b}} created context field {{b}}{{event.data.name}}{{b}}', '/context'],
  [
    'context-field-deleted',
    'Context field deleted',
    '{{b}}{{user}}{{b}} deleted context field {{b}}{{event.preData.name}}{{b}}',
    '/context',
  ],
  [
    'context-field-updated',
    'Context field updated',
    '{{b}}{{user}}{{b}} updated context field {{b}}{{event.preData.name}}{{b}}',
    '/context',
  ],
  [
    'feature-archived',
    'Flag archived',
    '{{b}}{{user}}{{b}} archived {{b}}{{event.featureName}}{{b}} in project {{b}}{{project}}{{b}}',
    '/projects/{{event.project}}/archive',
  ],
  ['feature-created', 'Flag created', '{{b}}{{user}}{{b}} created {{b}}{{feature}}{{b}} in project {{b}}{{project}}{{b}}', FEATURE_PATH],
  [
    'feature-deleted',
    'Flag deleted',
    '{{b}}{{user}}{{b}} deleted {{b}}{{event.featureName}}{{b}} in project {{b}}{{project}}{{b}}',
    '/projects/{{event.project}}',
  ],
  ['feature-environment-disabled', 'Flag disabled', `{{b}}{{user}}{{b}} disabled {{b}}{{feature}}{{b}} ${FOR_ENV}`, FEATURE_PATH],
  ['feature-environment-enabled', 'Flag enabled', `{{b}}{{user}}{{b}} enabled {{b}}{{feature}}{{b}} ${FOR_ENV}`, FEATURE_PATH],
  [
    'feature-environment-variants-updated',
    'Flag variants updated',
    `{{b}}{{user}}{{b}} updated variants for {{b}}{{feature}}{{b}} ${FOR_ENV}`,
    `${FEATURE_PATH}/variants`,
  ],
  [
    'feature-metadata-updated',
    'Flag metadata updated',
    '{{b}}{{user}}{{b}} updated {{b}}{{feature}}{{b}} metadata in project {{b}}{{project}}{{b}}',
    FEATURE_PATH,
  ],
  [
    'feature-completed',
    'Flag marked as completed',
    '{{b}}{{feature}}{{b}} was marked as completed in project {{b}}{{project}}{{b}}',
    FEATURE_PATH,
  ],
  [
    'feature-potentially-stale-on',
    'Flag potentially stale',
    '{{b}}{{feature}}{{b}} was marked as potentially stale in project {{b}}{{project}}{{b}}',
    FEATURE_PATH,
  ],
  [
    'feature-project-change',
    'Flag moved to a new project',
    '{{b}}{{user}}{{b}} moved {{b}}{{feature}}{{b}} from {{b}}{{event.data.oldProject}}{{b}} to {{b}}{{project}}{{b}}',
    FEATURE_PATH,
  ],
  ['feature-revived', 'Flag revived', '{{b}}{{user}}{{b}} revived {{b}}{{feature}}{{b}} in project {{b}}{{project}}{{b}}', FEATURE_PATH],
  [
    'feature-stale-off',
    'Flag stale marking removed',
    '{{b}}{{user}}{{b}} removed the stale marking on {{b}}{{feature}}{{b}} in project {{b}}{{project}}{{b}}',
    FEATURE_PATH,
  ],
  [
    'feature-stale-on',
    'Flag marked as stale',
    '{{b}}{{user}}{{b}} marked {{b}}{{feature}}{{b}} as stale in project {{b}}{{project}}{{b}}',
    FEATURE_PATH,
  ],
  [
    'feature-strategy-add',
    'Flag strategy added',
    `{{b}}{{user}}{{b}} added strategy {{b}}{{strategyTitle}}{{b}} to {{b}}{{feature}}{{b}} ${FOR_ENV}`,
    FEATURE_PATH,
  ],
  [
    'feature-strategy-remove',
    'Flag strategy removed',
    `{{b}}{{user}}{{b}} removed strategy {{b}}{{strategyTitle}}{{b}} from {{b}}{{feature}}{{b}} ${FOR_ENV}`,
    FEATURE_PATH,
  ],
  [
    'feature-strategy-update',
    'Flag strategy updated',
    '{{b}}{{user}}{{b}} updated {{b}}{{feature}}{{b}} in project {{b}}{{project}}{{b}} {{strategyChangeText}}',
    FEATURE_PATH,
  ],
  [
    'feature-tagged',
    'Flag tagged',
    '{{b}}{{user}}{{b}} tagged {{b}}{{feature}}{{b}} with {{b}}{{event.data.type}}:{{event.data.value}}{{b}} in project {{b}}{{project}}{{b}}',
    FEATURE_PATH,
  ],
  [
    'feature-untagged',
    'Flag untagged',
    '{{b}}{{user}}{{b}} untagged {{b}}{{feature}}{{b}} with {{b}}{{event.preData.type}}:{{event.preData.value}}{{b}} in project {{b}}{{project}}{{b}}',
    FEATURE_PATH,
  ],
  ['group-created', 'Group created', '{{b}}{{user}}{{b}} created group {{b}}{{event.data.name}}{{b}}', '/admin/groups'],
  ['group-deleted', 'Group deleted', '{{b}}{{user}}{{b}} deleted group {{b}}{{event.preData.name}}{{b}}', '/admin/groups'],
  ['group-updated', 'Group updated', '{{b}}{{user}}{{b}} updated group {{b}}{{event.preData.name}}{{b}}', '/admin/groups'],
  ['banner-created', 'Banner created', '{{b}}{{user}}{{b}} created banner {{b}}{{event.data.message}}{{b}}', '/admin/message-banners'],
  ['banner-deleted', 'Banner deleted', '{{b}}{{user}}{{b}} deleted banner {{b}}{{event.preData.message}}{{b}}', '/admin/message-banners'],
  ['banner-updated', 'Banner updated', '{{b}}{{user}}{{b}} updated banner {{b}}{{event.preData.message}}{{b}}', '/admin/message-banners'],
  ['project-created', 'Project created', '{{b}}{{user}}{{b}} created project {{b}}{{project}}{{b}}', '/projects'],
  ['project-archived', 'Project archived', '{{b}}{{user}}{{b}} archived project {{b}}{{event.project}}{{b}}', '/projects-archive'],
  ['project-deleted', 'Project deleted', '{{b}}{{user}}{{b}} deleted project {{b}}{{event.project}}{{b}}', '/projects'],
  ['segment-created', 'Segment created', '{{b}}{{user}}{{b}} created segment {{b}}{{event.data.name}}{{b}}', '/segments'],
  ['segment-deleted', 'Segment deleted', '{{b}}{{user}}{{b}} deleted segment {{b}}{{event.preData.name}}{{b}}', '/segments'],
  ['segment-updated', 'Segment updated', '{{b}}{{user}}{{b}} updated segment {{b}}{{event.preData.name}}{{b}}', '/segments'],
  [
    'service-account-created',
    'Service account created',
    '{{b}}{{user}}{{b}} created service account {{b}}{{event.data.name}}{{b}}',
    '/admin/service-accounts',
  ],
  [
    'service-account-deleted',
    'Service account deleted',
    '{{b}}{{user}}{{b}} deleted service account {{b}}{{event.preData.name}}{{b}}',
    '/admin/service-accounts',
  ],
  [
    'service-account-updated',
    'Service account updated',
    '{{b}}{{user}}{{b}} updated service account {{b}}{{event.preData.name}}{{b}}',
    '/admin/service-accounts',
  ],
  ['user-created', 'User created', '{{b}}{{user}}{{b}} created user {{b}}{{event.data.name}}{{b}}', '/admin/users'],
  ['user-deleted', 'User deleted', '{{b}}{{user}}{{b}} deleted user {{b}}{{event.preData.name}}{{b}}', '/admin/users'],
  ['user-updated', 'User updated', '{{b}}{{user}}{{b}} updated user {{b}}{{event.preData.name}}{{b}}', '/admin/users'],
  [
    'release-plan-added',
    'Release plan added',
    `{{b}}{{user}}{{b}} added release plan {{b}}{{event.data.name}}{{b}} to {{b}}{{feature}}{{b}} ${FOR_ENV}`,
    FEATURE_PATH,
  ],
  [
    'release-plan-removed',
    'Release plan removed',
    `{{b}}{{user}}{{b}} removed release plan {{b}}{{event.preData.name}}{{b}} from {{b}}{{feature}}{{b}} ${FOR_ENV}`,
    FEATURE_PATH,
  ],
  [
    'release-plan-milestone-started',
    'Release plan milestone started',
    `{{b}}{{user}}{{b}} started milestone {{b}}{{event.data.milestoneName}}{{b}} in release plan {{b}}{{event.data.name}}{{b}} for {{b}}{{feature}}{{b}} ${FOR_ENV}`,
    FEATURE_PATH,
  ],
];

const MESSAGE_BY_TYPE = new Map(MESSAGES.map(([type, label, action, path]) => [type, { label, action, path }]));

const BOLD = '*';

/** `*text*`; a lone `*` for no text (as Unleash writes an unknown title or environment). */
function bold(text?: unknown): string {
  return text ? `${BOLD}${String(text)}${BOLD}` : BOLD;
}

type Loose = Record<string, any> | null | undefined;

function record(value: unknown): Loose {
  return value !== null && typeof value === 'object' ? (value as Record<string, any>) : undefined;
}

function link(style: LinkStyle, url: string, text: string): string {
  return style === 'slack' ? `<${url}|${text}>` : `[${text}](${url})`;
}

/** Where the flag of the event is in the UI (the project's archive for an archived flag). */
function featureAddress(event: FormattableEvent, baseUrl: string): string | undefined {
  const project = event.project ?? '';
  if (event.type === 'feature-archived') return project ? `${baseUrl}/projects/${project}/archive` : `${baseUrl}/archive`;
  return event.featureName ? `${baseUrl}/projects/${project}/features/${event.featureName}` : undefined;
}

function featureLink(event: FormattableEvent, baseUrl: string, style: LinkStyle): string | undefined {
  return event.featureName ? link(style, featureAddress(event, baseUrl)!, event.featureName) : undefined;
}

function projectLink(event: FormattableEvent, baseUrl: string, style: LinkStyle): string | undefined {
  return event.project ? link(style, `${baseUrl}/projects/${event.project}`, event.project) : undefined;
}

function changeRequestLink(event: FormattableEvent, baseUrl: string, style: LinkStyle): string | undefined {
  const id = record(event.data)?.changeRequestId || record(event.preData)?.changeRequestId;
  if (!event.project || !id) return undefined;
  const feature = featureLink(event, baseUrl, style);
  const project = projectLink(event, baseUrl, style);
  return [
    bold(link(style, `${baseUrl}/projects/${event.project}/change-requests/${id}`, `#${id}`)),
    feature ? ` for feature flag ${bold(feature)}` : '',
    event.environment ? ` in the ${bold(event.environment)} environment` : '',
    ` in project ${bold(project ?? '')}`,
  ].join('');
}

function strategyTitle(event: FormattableEvent): unknown {
  const before = record(event.preData);
  const after = record(event.data);
  return before?.title || after?.title || before?.name || after?.name;
}

const OPERATORS: Record<string, string> = {
  IN: 'is one of',
  NOT_IN: 'is not one of',
  STR_CONTAINS: 'is a string that contains',
  STR_STARTS_WITH: 'is a string that starts with',
  STR_ENDS_WITH: 'is a string that ends with',
  NUM_EQ: 'is a number equal to',
  NUM_GT: 'is a number greater than',
  NUM_GTE: 'is a number greater than or equal to',
  NUM_LT: 'is a number less than',
  NUM_LTE: 'is a number less than or equal to',
  DATE_BEFORE: 'is a date before',
  DATE_AFTER: 'is a date after',
  SEMVER_EQ: 'is a SemVer equal to',
  SEMVER_GT: 'is a SemVer greater than',
  SEMVER_LT: 'is a SemVer less than',
};

function constraintsText(constraints: Record<string, any>[]): string {
  if (constraints.length === 0) return 'empty set of constraints';
  const one = (constraint: Record<string, any>) => {
    const value = Object.hasOwn(constraint, 'value') ? constraint.value : `(${(constraint.values as unknown[] | undefined)?.join(',')})`;
    const operator = Object.hasOwn(OPERATORS, constraint.operator) ? OPERATORS[constraint.operator] : constraint.operator;
    return `${constraint.contextName} ${constraint.inverted ? 'not ' : ''}${operator} ${value}`;
  };
  return `[${constraints.map(one).join(', ')}]`;
}

function fromTo(what: string, before: string, after: string): string {
  return before === after ? '' : ` ${what} from ${before} to ${after}`;
}

/** A changed value: `' name to x'` when there was none before, `' name from a to x'` otherwise, '' when unchanged. */
function change(what: string, before: unknown, after: unknown, hadBefore: boolean, shown: (value: any) => string): string {
  if (before === after) return '';
  return hadBefore ? ` ${what} from ${shown(before)} to ${shown(after)}` : ` ${what} to ${shown(after)}`;
}

/** The strategy parameters whose changes Unleash spells out, by strategy: [parameter, how a value shows]. */
const LIST_PARAMETERS: Record<string, string> = { userWithId: 'userIds', remoteAddress: 'IPs', applicationHostname: 'hostNames' };

function strategyChangeText(event: FormattableEvent): string | undefined {
  const before = record(event.preData);
  const after = record(event.data);
  if (event.type !== 'feature-strategy-update' || (!before && !after)) return undefined;
  const name = (after ?? before)!.name;
  const head = `by updating strategy ${bold(strategyTitle(event))} in ${bold(event.environment)}`;
  const was = before?.parameters ?? {};
  const is = after?.parameters ?? {};
  let specific: string[];
  if (name === 'flexibleRollout') {
    specific = [
      change('stickiness', was.stickiness, is.stickiness, Boolean(was.stickiness), String),
      change('rollout', was.rollout, is.rollout, Boolean(was.rollout), (value) => `${value}%`),
      change('groupId', was.groupId, is.groupId, Boolean(was.groupId), String),
    ];
  } else if (LIST_PARAMETERS[name] !== undefined) {
    const key = LIST_PARAMETERS[name];
    const list = (values: any) => (values == null || values.length === 0 ? `empty set of ${key}` : `[${values}]`);
    specific = [change(key, was[key], is[key], Boolean(before), list)];
  } else if (name === 'default') {
    specific = [];
  } else {
    return head;
  }
  const constraints = fromTo('constraints', constraintsText(before?.constraints ?? []), constraintsText(after?.constraints ?? []));
  const segments = fromTo('segments', segmentsText(before?.segments ?? []), segmentsText(after?.segments ?? []));
  return `${head}${[...specific, constraints, segments].filter((text) => text.length > 0).join(';')}`;
}

function segmentsText(segments: unknown[]): string {
  return segments.length === 0 ? 'empty set of segments' : `(${segments.join(',')})`;
}

/** The label, text and UI address of an event, as Unleash's integrations word them. */
export function formatEvent(event: FormattableEvent, baseUrl: string, style: LinkStyle): Formatted {
  const known = MESSAGE_BY_TYPE.get(event.type);
  const { label, action, path } = known ?? {
    label: event.type,
    action: `${bold(event.createdBy)} triggered ${bold(event.type)}`,
    path: undefined,
  };
  const view = {
    user: event.createdBy,
    event,
    strategyTitle: strategyTitle(event),
    strategyChangeText: strategyChangeText(event),
    changeRequest: changeRequestLink(event, baseUrl, style),
    feature: featureLink(event, baseUrl, style),
    project: projectLink(event, baseUrl, style),
    b: BOLD,
  };
  const text = Mustache.render(action, view, undefined, NO_ESCAPE);
  return path === undefined ? { label, text } : { label, text, url: `${baseUrl}${Mustache.render(path, view, undefined, NO_ESCAPE)}` };
}
