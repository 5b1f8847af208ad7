/**
 * The labels Unleash 6.10.1's event formatter gives the event types this service writes; any
 * other type is labelled with the type itself, as Unleash does for types it does not format.
 */
const LABELS: Readonly<Record<string, string>> = {
  'api-token-created': 'API token created',
  'api-token-deleted': 'API token deleted',
  'feature-archived': 'Flag archived',
  'feature-completed': 'Flag marked as completed',
  'feature-created': 'Flag created',
  'feature-deleted': 'Flag deleted',
  'feature-environment-disabled': 'Flag disabled',
  'feature-environment-enabled': 'Flag enabled',
  'feature-environment-variants-updated': 'Flag variants updated',
  'feature-metadata-updated': 'Flag metadata updated',
  'feature-revived': 'Flag revived',
  'feature-stale-off': 'Flag stale marking removed',
  'feature-stale-on': 'Flag marked as stale',
  'feature-strategy-add': 'Flag strategy added',
  'feature-strategy-remove': 'Flag strategy removed',
  'feature-strategy-update': 'Flag strategy updated',
  'feature-tagged': 'Flag tagged',
  'feature-untagged': 'Flag untagged',
  'project-created': 'Project created',
  'segment-created': 'Segment created',
  'segment-deleted': 'Segment deleted',
  'segment-updated': 'Segment updated',
  'user-created': 'User created',
  'user-deleted': 'User deleted',
  'user-updated': 'User updated',
};

export function labelOf(type: string): string {
  return Object.hasOwn(LABELS, type) ? LABELS[type]! : type;
}
