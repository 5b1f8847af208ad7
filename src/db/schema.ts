/**
 * The whole data model, in SQLite form, following Unleash's tables
 * (reference/unleash-behaviour.md §8). drizzle-kit generates the migrations from this file.
 *
 * Conventions:
 * - timestamps are ISO-8601 strings in UTC with milliseconds (`2026-11-20T23:30:00.000Z`),
 *   so they sort and compare as text and go to JSON unchanged;
 * - booleans are SQLite integers (drizzle `mode: 'boolean'`);
 * - JSON documents (parameters, constraints, variants, legal values) are text columns
 *   typed with `$type<...>()`.
 */
import { sql } from 'drizzle-orm';
import { blob, index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`;
const createdAt = () => text('created_at').notNull().default(now);
const bool = (name: string) => integer(name, { mode: 'boolean' });

// ---------------------------------------------------------------------------------------
// JSON document types stored in text columns

/**
 * Constraint operators of the seed's Constraint resource, plus those Unleash 7/8 added with
 * client-specification 6.x (REGEX, SEMVER_GTE, SEMVER_LTE) and IN_CIDR, which Unleash 8.3
 * added to its admin API (8.2.0 still refuses it).
 */
export const CONSTRAINT_OPERATORS = [
  'NOT_IN',
  'IN',
  'STR_ENDS_WITH',
  'STR_STARTS_WITH',
  'STR_CONTAINS',
  'NUM_EQ',
  'NUM_GT',
  'NUM_GTE',
  'NUM_LT',
  'NUM_LTE',
  'DATE_AFTER',
  'DATE_BEFORE',
  'SEMVER_EQ',
  'SEMVER_GT',
  'SEMVER_LT',
  'SEMVER_GTE',
  'SEMVER_LTE',
  'REGEX',
  'IN_CIDR',
] as const;
export const PAYLOAD_TYPES = ['json', 'csv', 'string', 'number'] as const;
export const WEIGHT_TYPES = ['variable', 'fix'] as const;

export interface ConstraintDoc {
  contextName: string;
  operator: string;
  caseInsensitive?: boolean;
  inverted?: boolean;
  values?: string[];
  value?: string;
}

export interface PayloadDoc {
  type: string;
  value: string;
}

export interface StrategyVariantDoc {
  name: string;
  weight: number;
  weightType: 'variable' | 'fix';
  stickiness: string;
  payload?: PayloadDoc;
}

export interface VariantDoc {
  name: string;
  weight: number;
  weightType?: 'variable' | 'fix';
  stickiness?: string;
  payload?: PayloadDoc;
  overrides?: { contextName: string; values: string[] }[];
}

/** A project environment's default strategy, as `PUT …/default-strategy` validated and stored it. */
export interface DefaultStrategyDoc {
  name: string;
  title?: string | null;
  parameters?: Record<string, string>;
  constraints?: ConstraintDoc[];
  segments?: number[];
  variants?: StrategyVariantDoc[];
}

export interface LegalValueDoc {
  value: string;
  description?: string;
}

export interface StrategyParameterDoc {
  name: string;
  type: string;
  description?: string | null;
  required?: boolean;
}

// ---------------------------------------------------------------------------------------
// Projects and environments

export const projects = sqliteTable('projects', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description'),
  mode: text('mode').notNull().default('open'),
  defaultStickiness: text('default_stickiness').notNull().default('default'),
  featureLimit: integer('feature_limit'),
  featureNamingPattern: text('feature_naming_pattern'),
  featureNamingExample: text('feature_naming_example'),
  featureNamingDescription: text('feature_naming_description'),
  createdAt: createdAt(),
  updatedAt: text('updated_at'),
  archivedAt: text('archived_at'),
});

export const environments = sqliteTable('environments', {
  name: text('name').primaryKey(),
  type: text('type').notNull(),
  sortOrder: integer('sort_order').notNull().default(9999),
  enabled: bool('enabled').notNull().default(true),
  protected: bool('protected').notNull().default(false),
  /** Approvals a change request needs here, set up for each project the environment joins; null: none predefined (Unleash Enterprise). */
  requiredApprovals: integer('required_approvals'),
  createdAt: createdAt(),
});

export const projectEnvironments = sqliteTable(
  'project_environments',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    environmentName: text('environment_name')
      .notNull()
      .references(() => environments.name, { onDelete: 'cascade' }),
    /** A strategy document added when a flag is enabled with no strategies. */
    defaultStrategy: text('default_strategy', { mode: 'json' }).$type<DefaultStrategyDoc>(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.environmentName] })],
);

// ---------------------------------------------------------------------------------------
// Features

export const featureTypes = sqliteTable('feature_types', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description'),
  lifetimeDays: integer('lifetime_days'),
});

export const features = sqliteTable(
  'features',
  {
    name: text('name').primaryKey(),
    description: text('description'),
    type: text('type').notNull().default('release'),
    project: text('project')
      .notNull()
      .default('default')
      .references(() => projects.id),
    stale: bool('stale').notNull().default(false),
    potentiallyStale: bool('potentially_stale').notNull().default(false),
    impressionData: bool('impression_data').notNull().default(false),
    createdAt: createdAt(),
    createdByUserId: integer('created_by_user_id'),
    archivedAt: text('archived_at'),
    /** Feature-level last seen (max over environments), kept for sorting and the legacy field. */
    lastSeenAt: text('last_seen_at'),
  },
  (t) => [
    // Default listing: active features in creation order; search filters narrow from here.
    index('features_archived_created_idx').on(t.archivedAt, t.createdAt, t.name),
    // Search counts start from the features a filter names and check each one's archived_at:
    // covering, that check is one index probe instead of two.
    index('features_name_archived_idx').on(t.name, t.archivedAt),
    // Search pages filtered on one project or type, in creation order, straight from an index.
    index('features_project_created_idx').on(t.project, t.archivedAt, t.createdAt, t.name),
    // (Their prefixes serve lookups by project or type too; separate indexes on those only
    // slowed every write of a feature.)
    index('features_type_created_idx').on(t.type, t.archivedAt, t.createdAt, t.name),
    index('features_stale_idx').on(t.stale),
    index('features_created_by_idx').on(t.createdByUserId),
    index('features_last_seen_idx').on(t.lastSeenAt),
    // Search newest-seen first: last_seen_at is kept >= every environment's by triggers
    // (migrations/0011_ui.sql), so that order walks this index.
    index('features_archived_last_seen_idx').on(t.archivedAt, sql`${t.lastSeenAt} DESC`, t.createdAt, t.name),
  ],
);

export const featureEnvironments = sqliteTable(
  'feature_environments',
  {
    featureName: text('feature_name')
      .notNull()
      .references(() => features.name, { onDelete: 'cascade' }),
    environment: text('environment')
      .notNull()
      .references(() => environments.name, { onDelete: 'cascade' }),
    enabled: bool('enabled').notNull().default(false),
    variants: text('variants', { mode: 'json' })
      .$type<VariantDoc[]>()
      .notNull()
      .default(sql`'[]'`),
    lastSeenAt: text('last_seen_at'),
  },
  (t) => [
    primaryKey({ columns: [t.featureName, t.environment] }),
    // status filters and environment sorts look up (environment, enabled) for many features.
    index('feature_environments_env_enabled_idx').on(t.environment, t.enabled, t.featureName),
  ],
);

export const strategies = sqliteTable('strategies', {
  name: text('name').primaryKey(),
  title: text('title'),
  displayName: text('display_name'),
  description: text('description'),
  builtIn: bool('built_in').notNull().default(false),
  deprecated: bool('deprecated').notNull().default(false),
  sortOrder: integer('sort_order').notNull().default(9999),
  parameters: text('parameters', { mode: 'json' })
    .$type<StrategyParameterDoc[]>()
    .notNull()
    .default(sql`'[]'`),
  createdAt: createdAt(),
});

export const featureStrategies = sqliteTable(
  'feature_strategies',
  {
    id: text('id').primaryKey(),
    featureName: text('feature_name')
      .notNull()
      .references(() => features.name, { onDelete: 'cascade' }),
    projectName: text('project_name').notNull(),
    environment: text('environment').notNull(),
    strategyName: text('strategy_name').notNull(),
    title: text('title'),
    parameters: text('parameters', { mode: 'json' })
      .$type<Record<string, string>>()
      .notNull()
      .default(sql`'{}'`),
    constraints: text('constraints', { mode: 'json' })
      .$type<ConstraintDoc[]>()
      .notNull()
      .default(sql`'[]'`),
    variants: text('variants', { mode: 'json' })
      .$type<StrategyVariantDoc[]>()
      .notNull()
      .default(sql`'[]'`),
    sortOrder: integer('sort_order').notNull().default(9999),
    disabled: bool('disabled').notNull().default(false),
    createdAt: createdAt(),
    createdByUserId: integer('created_by_user_id'),
  },
  (t) => [
    index('feature_strategies_feature_env_idx').on(t.featureName, t.environment, t.sortOrder),
    index('feature_strategies_env_idx').on(t.environment, t.projectName),
  ],
);

export const segments = sqliteTable(
  'segments',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    name: text('name').notNull(),
    description: text('description'),
    constraints: text('constraints', { mode: 'json' })
      .$type<ConstraintDoc[]>()
      .notNull()
      .default(sql`'[]'`),
    /** NULL means a global segment. */
    segmentProjectId: text('segment_project_id').references(() => projects.id, { onDelete: 'cascade' }),
    createdBy: text('created_by'),
    createdAt: createdAt(),
  },
  (t) => [index('segments_name_idx').on(t.name)],
);

export const featureStrategySegment = sqliteTable(
  'feature_strategy_segment',
  {
    featureStrategyId: text('feature_strategy_id')
      .notNull()
      .references(() => featureStrategies.id, { onDelete: 'cascade' }),
    segmentId: integer('segment_id')
      .notNull()
      .references(() => segments.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.featureStrategyId, t.segmentId] }), index('feature_strategy_segment_segment_idx').on(t.segmentId)],
);

export const tagTypes = sqliteTable('tag_types', {
  name: text('name').primaryKey(),
  description: text('description'),
  icon: text('icon'),
  color: text('color'),
  createdAt: createdAt(),
});

export const tags = sqliteTable(
  'tags',
  {
    type: text('type')
      .notNull()
      .references(() => tagTypes.name, { onDelete: 'cascade' }),
    value: text('value').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.type, t.value] })],
);

export const featureTag = sqliteTable(
  'feature_tag',
  {
    featureName: text('feature_name')
      .notNull()
      .references(() => features.name, { onDelete: 'cascade' }),
    tagType: text('tag_type').notNull(),
    tagValue: text('tag_value').notNull(),
    createdAt: createdAt(),
    createdByUserId: integer('created_by_user_id'),
  },
  (t) => [
    primaryKey({ columns: [t.featureName, t.tagType, t.tagValue] }),
    index('feature_tag_tag_idx').on(t.tagType, t.tagValue, t.featureName),
  ],
);

export const contextFields = sqliteTable('context_fields', {
  name: text('name').primaryKey(),
  description: text('description'),
  sortOrder: integer('sort_order').notNull().default(10),
  legalValues: text('legal_values', { mode: 'json' })
    .$type<LegalValueDoc[]>()
    .notNull()
    .default(sql`'[]'`),
  stickiness: bool('stickiness').notNull().default(false),
  /** NULL means a global context field. */
  project: text('project').references(() => projects.id, { onDelete: 'cascade' }),
  createdAt: createdAt(),
  updatedAt: text('updated_at'),
});

export const dependentFeatures = sqliteTable(
  'dependent_features',
  {
    parent: text('parent')
      .notNull()
      .references(() => features.name, { onDelete: 'restrict' }),
    child: text('child')
      .notNull()
      .references(() => features.name, { onDelete: 'cascade' }),
    enabled: bool('enabled').notNull().default(true),
    variants: text('variants', { mode: 'json' })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
  },
  (t) => [primaryKey({ columns: [t.parent, t.child] }), index('dependent_features_child_idx').on(t.child)],
);

/**
 * Flag names SDKs reported metrics for that are not flags (Unleash 7.0+ "unknown flags"): the
 * latest report per name, application and environment, kept 24 hours.
 */
export const unknownFlags = sqliteTable(
  'unknown_flags',
  {
    name: text('name').notNull(),
    appName: text('app_name').notNull(),
    environment: text('environment').notNull(),
    seenAt: text('seen_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.name, t.appName, t.environment] }), index('unknown_flags_seen_idx').on(t.seenAt)],
);

/**
 * A flag's links (Unleash 7.0+ `feature_link`): ULID ids, so id order is creation order, as
 * Unleash lists them. `domain` is the URL's host, kept as Unleash keeps it.
 */
export const featureLinks = sqliteTable(
  'feature_links',
  {
    id: text('id').primaryKey(),
    featureName: text('feature_name')
      .notNull()
      .references(() => features.name, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    title: text('title'),
    domain: text('domain'),
  },
  (t) => [index('feature_links_feature_idx').on(t.featureName, t.id)],
);

export const favoriteFeatures = sqliteTable(
  'favorite_features',
  {
    feature: text('feature')
      .notNull()
      .references(() => features.name, { onDelete: 'cascade' }),
    userId: integer('user_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.feature, t.userId] }), index('favorite_features_user_idx').on(t.userId, t.feature)],
);

/** Projects a person marked as a favourite (`POST /api/admin/projects/:projectId/favorites`). */
export const favoriteProjects = sqliteTable(
  'favorite_projects',
  {
    project: text('project')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    userId: integer('user_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.project, t.userId] }), index('favorite_projects_user_idx').on(t.userId, t.project)],
);

export const FEATURE_LIFECYCLE_STAGES = ['initial', 'pre-live', 'live', 'completed', 'archived'] as const;

export const featureLifecycles = sqliteTable(
  'feature_lifecycles',
  {
    feature: text('feature')
      .notNull()
      .references(() => features.name, { onDelete: 'cascade' }),
    stage: text('stage').notNull(),
    /** e.g. `kept` / `discarded` for `completed`. */
    status: text('status'),
    statusValue: text('status_value'),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.feature, t.stage] }), index('feature_lifecycles_latest_idx').on(t.feature, t.createdAt)],
);

/** Hourly buckets of SDK evaluations per feature, app and environment. */
export const clientMetricsEnv = sqliteTable(
  'client_metrics_env',
  {
    featureName: text('feature_name').notNull(),
    appName: text('app_name').notNull(),
    environment: text('environment').notNull(),
    /** Start of the hour, ISO. */
    timestamp: text('timestamp').notNull(),
    yes: integer('yes').notNull().default(0),
    no: integer('no').notNull().default(0),
    /** Per-variant counts for the bucket, `{variantName: count}`. */
    variants: text('variants', { mode: 'json' })
      .$type<Record<string, number>>()
      .notNull()
      .default(sql`'{}'`),
  },
  (t) => [
    primaryKey({ columns: [t.featureName, t.appName, t.environment, t.timestamp] }),
    index('client_metrics_env_time_idx').on(t.timestamp),
  ],
);

/**
 * The metrics Queue messages counted before flushes were recorded as `metrics_flushes` rows:
 * no longer written, still read (a message counted there and redelivered is recognised) until
 * its rows expire, 6 hours after the change; then this table can go (docs/metrics.md).
 */
export const metricsMessages = sqliteTable(
  'metrics_messages',
  {
    id: text('id').primaryKey(),
    processedAt: text('processed_at').notNull(),
  },
  (t) => [index('metrics_messages_processed_idx').on(t.processedAt)],
);

/**
 * One row per metrics flush (client-api/usage-queue.ts): the ids of the Queue messages it
 * counted, as a JSON array, written in the same atomic D1 batch as their counts, so that a
 * redelivered message is recognised and counted once. `min_received`/`max_received` bound the
 * receipt times of its messages: a flush holding a message received at t has
 * `max_received >= t`, which is what the look-up and the expiry use. Kept 6 hours after receipt.
 */
export const metricsFlushes = sqliteTable(
  'metrics_flushes',
  {
    id: integer('id').primaryKey(),
    flushedAt: text('flushed_at').notNull(),
    minReceived: text('min_received').notNull(),
    maxReceived: text('max_received').notNull(),
    /** JSON array of message ids. */
    messageIds: text('message_ids').notNull(),
  },
  (t) => [index('metrics_flushes_max_received_idx').on(t.maxReceived)],
);

/**
 * Requests the service answered, per UTC day, API path group (`/api/client`, `/api/frontend`,
 * `/api/admin`, …) and status series (200, 300, 400, 500), as Unleash's `stat_traffic_usage`.
 * Written by the isolates' flushes (src/admin/traffic-usage/counter.ts), never per request.
 */
export const statTrafficUsage = sqliteTable(
  'stat_traffic_usage',
  {
    /** `yyyy-MM-dd`, UTC. */
    day: text('day').notNull(),
    trafficGroup: text('traffic_group').notNull(),
    statusCodeSeries: integer('status_code_series').notNull(),
    count: integer('count').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.day, t.trafficGroup, t.statusCodeSeries] })],
);

export const clientApplications = sqliteTable('client_applications', {
  appName: text('app_name').primaryKey(),
  description: text('description'),
  url: text('url'),
  color: text('color'),
  icon: text('icon'),
  strategies: text('strategies', { mode: 'json' })
    .$type<string[]>()
    .notNull()
    .default(sql`'[]'`),
  createdAt: createdAt(),
  updatedAt: text('updated_at'),
  seenAt: text('seen_at'),
});

export const clientInstances = sqliteTable(
  'client_instances',
  {
    appName: text('app_name').notNull(),
    instanceId: text('instance_id').notNull(),
    environment: text('environment').notNull().default('default'),
    sdkVersion: text('sdk_version'),
    clientIp: text('client_ip'),
    interval: integer('interval'),
    createdAt: createdAt(),
    lastSeen: text('last_seen'),
    /** The frontend key whose report created the row (its quota of new instances); null for other keys. */
    createdByToken: text('created_by_token'),
  },
  (t) => [
    primaryKey({ columns: [t.appName, t.instanceId, t.environment] }),
    index('client_instances_token_idx').on(t.createdByToken, t.createdAt),
    index('client_instances_last_seen_idx').on(t.lastSeen),
  ],
);

// ---------------------------------------------------------------------------------------
// People: users, roles, permissions, public signup tokens

export const users = sqliteTable(
  'users',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    name: text('name'),
    username: text('username'),
    /** Stored trimmed and lowercased. */
    email: text('email'),
    imageUrl: text('image_url'),
    /** `pbkdf2-sha256$<iterations>$<salt b64>$<hash b64>`; never returned. */
    passwordHash: text('password_hash'),
    loginAttempts: integer('login_attempts').notNull().default(0),
    /** When the latest failed sign-in happened (for people to see; the limits count `login_failures`). */
    lastFailedLoginAt: text('last_failed_login_at'),
    createdAt: createdAt(),
    seenAt: text('seen_at'),
    deletedAt: text('deleted_at'),
    isService: bool('is_service').notNull().default(false),
    isSystem: bool('is_system').notNull().default(false),
    /**
     * Set when a SCIM directory provisioned the person: their SCIM resource id (a UUID). While
     * SCIM is enabled the admin API refuses hand edits of such people (as Unleash does).
     */
    scimId: text('scim_id'),
    /** The directory's own id for the person (SCIM `externalId`), as the client sent it. */
    scimExternalId: text('scim_external_id'),
    createdByUserId: integer('created_by_user_id'),
    updatedAt: text('updated_at'),
  },
  (t) => [
    uniqueIndex('users_email_unique').on(t.email),
    uniqueIndex('users_username_unique').on(t.username),
    uniqueIndex('users_scim_id_unique').on(t.scimId),
  ],
);

export const roles = sqliteTable(
  'roles',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    name: text('name').notNull(),
    description: text('description'),
    /** `root`, `project`, `root-custom` or `custom`. */
    type: text('type').notNull().default('custom'),
    createdAt: createdAt(),
    createdByUserId: integer('created_by_user_id'),
    updatedAt: text('updated_at'),
  },
  (t) => [uniqueIndex('roles_type_name_unique').on(t.type, t.name)],
);

export const roleUser = sqliteTable(
  'role_user',
  {
    roleId: integer('role_id')
      .notNull()
      .references(() => roles.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The root role is the row in project `default` whose role type is root or root-custom. */
    project: text('project').notNull().default('default'),
    createdAt: createdAt(),
    createdByUserId: integer('created_by_user_id'),
  },
  (t) => [primaryKey({ columns: [t.roleId, t.userId, t.project] }), index('role_user_user_idx').on(t.userId)],
);

export const permissions = sqliteTable('permissions', {
  id: integer('id').primaryKey(),
  permission: text('permission').notNull().unique(),
  displayName: text('display_name').notNull(),
  /** `root`, `project` or `environment`. */
  type: text('type').notNull(),
});

export const rolePermission = sqliteTable(
  'role_permission',
  {
    roleId: integer('role_id')
      .notNull()
      .references(() => roles.id, { onDelete: 'cascade' }),
    permission: text('permission')
      .notNull()
      .references(() => permissions.permission, { onDelete: 'cascade' }),
    /** '' for root and project permissions. */
    environment: text('environment').notNull().default(''),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.roleId, t.permission, t.environment] })],
);

// ---------------------------------------------------------------------------------------
// Groups (Unleash Enterprise's groups, group_user and group_role tables)

export const groups = sqliteTable(
  'groups',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    name: text('name').notNull(),
    description: text('description'),
    /** The SSO group names (JSON list) whose members sign-in sync puts into this group. */
    mappingsSso: text('mappings_sso', { mode: 'json' })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    /** A root role every member gets on top of their own; null for none. */
    rootRoleId: integer('root_role_id').references(() => roles.id, { onDelete: 'set null' }),
    /** Set when a SCIM client provisioned the group: the UI then does not edit it by hand. */
    scimId: text('scim_id'),
    scimExternalId: text('scim_external_id'),
    createdAt: createdAt(),
    /** Who created it: a username or email, `SSO`/`SCIM` for synced ones. */
    createdBy: text('created_by'),
  },
  (t) => [index('groups_name_idx').on(t.name), uniqueIndex('groups_scim_id_unique').on(t.scimId)],
);

export const groupUser = sqliteTable(
  'group_user',
  {
    groupId: integer('group_id')
      .notNull()
      .references(() => groups.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** Who added the member; `SSO` marks a membership sign-in sync made (and may remove). */
    createdBy: text('created_by'),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.userId] }), index('group_user_user_idx').on(t.userId)],
);

export const groupRole = sqliteTable(
  'group_role',
  {
    groupId: integer('group_id')
      .notNull()
      .references(() => groups.id, { onDelete: 'cascade' }),
    roleId: integer('role_id')
      .notNull()
      .references(() => roles.id, { onDelete: 'cascade' }),
    project: text('project').notNull(),
    createdBy: text('created_by'),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.roleId, t.project] }), index('group_role_project_idx').on(t.project)],
);

export const publicSignupTokens = sqliteTable('public_signup_tokens', {
  secret: text('secret').primaryKey(),
  name: text('name').notNull(),
  expiresAt: text('expires_at').notNull(),
  createdAt: createdAt(),
  createdBy: text('created_by'),
  roleId: integer('role_id')
    .notNull()
    .references(() => roles.id),
  url: text('url'),
  enabled: bool('enabled').notNull().default(true),
});

export const publicSignupTokensUser = sqliteTable(
  'public_signup_tokens_user',
  {
    secret: text('secret')
      .notNull()
      .references(() => publicSignupTokens.secret, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.secret, t.userId] })],
);

// ---------------------------------------------------------------------------------------
// API tokens: only the SHA-256 of a secret is stored, never the secret itself.

export const apiTokens = sqliteTable(
  'api_tokens',
  {
    /** hex SHA-256 of the secret; the lookup key here and in KV. */
    secretHash: text('secret_hash').primaryKey(),
    /** Public, non-secret id used in URLs (`/api/admin/api-tokens/<id>`). */
    id: text('id').notNull().unique(),
    /** `<scope>:<environment>.<first 6 hex>`: enough to recognise a key, useless to use it. */
    secretPrefix: text('secret_prefix').notNull(),
    tokenName: text('token_name').notNull(),
    /** `client`, `frontend` or `admin`, lowercase. */
    type: text('type').notNull(),
    /** `*` means all environments. */
    environment: text('environment').notNull(),
    expiresAt: text('expires_at'),
    seenAt: text('seen_at'),
    alias: text('alias'),
    createdAt: createdAt(),
    createdByUserId: integer('created_by_user_id'),
  },
  (t) => [index('api_tokens_type_idx').on(t.type)],
);

/** No rows for a token means all projects. */
export const apiTokenProject = sqliteTable(
  'api_token_project',
  {
    secretHash: text('secret_hash')
      .notNull()
      .references(() => apiTokens.secretHash, { onDelete: 'cascade' }),
    project: text('project')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.secretHash, t.project] })],
);

// ---------------------------------------------------------------------------------------
// Sessions and personal access tokens: like API keys, only the SHA-256 of a secret is stored.

/** A new user's link to choose a password (`/new-user?token=<secret>`); the secret's SHA-256 only. */
export const resetTokens = sqliteTable(
  'reset_tokens',
  {
    secretHash: text('secret_hash').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: text('expires_at').notNull(),
    usedAt: text('used_at'),
    createdBy: text('created_by'),
    createdAt: createdAt(),
  },
  (t) => [index('reset_tokens_user_idx').on(t.userId)],
);

/**
 * A person's latest passwords (hashes, newest last): Unleash 6 refuses any of the last 5 as a
 * new password when people change their own or set one through a reset link.
 */
export const usedPasswords = sqliteTable(
  'used_passwords',
  {
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    passwordHash: text('password_hash').notNull(),
    usedAt: text('used_at').notNull().default(now),
  },
  (t) => [primaryKey({ columns: [t.userId, t.passwordHash] })],
);

/**
 * Wrong passwords, one row each, per account and client address (an IPv4 address or an IPv6
 * /64): what the sign-in limits count (src/identity/passwords/login-limits.ts). Rows older than the
 * longest window are swept by the cron job.
 */
export const loginFailures = sqliteTable(
  'login_failures',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    address: text('address').notNull(),
    failedAt: text('failed_at').notNull(),
  },
  (t) => [
    index('login_failures_user_address_idx').on(t.userId, t.address, t.failedAt),
    index('login_failures_failed_at_idx').on(t.failedAt),
  ],
);

export const sessions = sqliteTable(
  'sessions',
  {
    /** hex SHA-256 of the session id sent in the `unleash-session` cookie. */
    idHash: text('id_hash').primaryKey(),
    /** Public, non-secret id (principals name their credential with it). */
    id: text('id').notNull(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
    expiresAt: text('expires_at').notNull(),
  },
  (t) => [
    uniqueIndex('sessions_id_unique').on(t.id),
    index('sessions_user_idx').on(t.userId),
    index('sessions_expires_idx').on(t.expiresAt),
  ],
);

export const personalAccessTokens = sqliteTable(
  'personal_access_tokens',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    /** hex SHA-256 of the `user:<hex>` secret. */
    secretHash: text('secret_hash').notNull(),
    description: text('description').notNull(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    expiresAt: text('expires_at').notNull(),
    createdAt: createdAt(),
    seenAt: text('seen_at'),
  },
  (t) => [
    uniqueIndex('personal_access_tokens_secret_hash_unique').on(t.secretHash),
    uniqueIndex('personal_access_tokens_user_description_unique').on(t.userId, t.description),
  ],
);

// ---------------------------------------------------------------------------------------
// Audit log and background jobs

/** Append-only audit log; its highest id doubles as the data revision for SDK caches. */
export const events = sqliteTable(
  'events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    type: text('type').notNull(),
    createdAt: createdAt(),
    createdBy: text('created_by').notNull(),
    createdByUserId: integer('created_by_user_id'),
    project: text('project'),
    environment: text('environment'),
    featureName: text('feature_name'),
    data: text('data', { mode: 'json' }),
    preData: text('pre_data', { mode: 'json' }),
  },
  (t) => [index('events_feature_idx').on(t.featureName), index('events_type_idx').on(t.type)],
);

export const importJobs = sqliteTable(
  'import_jobs',
  {
    id: text('id').primaryKey(),
    project: text('project').notNull(),
    environment: text('environment').notNull(),
    /**
     * `staging` (a large request still streaming its chunks in: invisible to everyone else),
     * then `queued`, `running`, `completed`, `failed` (by the consumer or the watchdog) or
     * `cancelled` (DELETE on the job).
     */
    status: text('status').notNull().default('queued'),
    totalChunks: integer('total_chunks').notNull(),
    doneChunks: integer('done_chunks').notNull().default(0),
    totalFeatures: integer('total_features').notNull().default(0),
    errors: text('errors', { mode: 'json' })
      .$type<{ message: string; chunk?: number }[]>()
      .notNull()
      .default(sql`'[]'`),
    createdBy: text('created_by').notNull(),
    createdByUserId: integer('created_by_user_id'),
    createdAt: createdAt(),
    startedAt: text('started_at'),
    finishedAt: text('finished_at'),
    /** When staging ended; jobs into one project/environment are applied in this order. */
    queuedAt: text('queued_at'),
    /** What the chunks' statements need besides their rows (ImportContext, JSON). */
    context: text('context', { mode: 'json' }),
  },
  (t) => [index('import_jobs_target_idx').on(t.project, t.environment, t.status)],
);

export const importJobChunks = sqliteTable(
  'import_job_chunks',
  {
    jobId: text('job_id')
      .notNull()
      .references(() => importJobs.id, { onDelete: 'cascade' }),
    chunkIndex: integer('chunk_index').notNull(),
    /** `{"kind": "features" | "dependencies"}`; the chunk's rows are its parts. */
    payload: text('payload', { mode: 'json' }).notNull(),
    /** `pending`, `done`, `failed`, or `skipped` (its job failed or was cancelled first). */
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    featureCount: integer('feature_count').notNull().default(0),
    appliedAt: text('applied_at'),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.chunkIndex] })],
);

/**
 * The rows of a chunk, staged while the request streams in: a chunk's features, strategies,
 * environment settings and tags arrive in different parts of the body, so a chunk is the
 * union of its parts. Each part is a JSONB object of arrays, read in place by jsonb_each.
 */
export const importJobParts = sqliteTable(
  'import_job_parts',
  {
    jobId: text('job_id')
      .notNull()
      .references(() => importJobs.id, { onDelete: 'cascade' }),
    chunkIndex: integer('chunk_index').notNull(),
    part: integer('part').notNull(),
    payload: blob('payload').notNull(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.chunkIndex, t.part] })],
);

/**
 * OpenID Connect sign-ins under way (src/identity/sso): one row per redirect to the provider,
 * taken (deleted) by the callback, so each `state` works once. The row is found by the hash of
 * `state`; the browser that started it proves itself with a cookie whose hash is kept; the
 * PKCE verifier is sealed with a key derived from that cookie, so the row alone reveals nothing
 * usable. Rows live 10 minutes.
 */
export const oidcLogins = sqliteTable(
  'oidc_logins',
  {
    stateHash: text('state_hash').primaryKey(),
    bindingHash: text('binding_hash').notNull(),
    nonceHash: text('nonce_hash').notNull(),
    /** base64 of AES-GCM iv + ciphertext of the PKCE code verifier. */
    sealedVerifier: text('sealed_verifier').notNull(),
    /** The path of ours the person goes to once signed in. */
    redirect: text('redirect').notNull(),
    expiresAt: text('expires_at').notNull(),
  },
  (t) => [index('oidc_logins_expires_idx').on(t.expiresAt)],
);

/**
 * Sign-in attempts (Unleash Enterprise's login history, src/identity/login-history): one row per
 * password, OpenID Connect or Cloudflare Access sign-in we handled, refused ones with their
 * reason. Never a password or token. `dedupe_key` (a hash) keeps one row per Cloudflare Access
 * sign-in, whose assertion every request carries. Kept 14 days (src/scheduled.ts).
 */
export const loginEvents = sqliteTable(
  'login_events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    username: text('username').notNull(),
    authType: text('auth_type').notNull(),
    createdAt: createdAt(),
    successful: bool('successful').notNull(),
    ip: text('ip'),
    failureReason: text('failure_reason'),
    dedupeKey: text('dedupe_key'),
  },
  (t) => [index('login_events_created_idx').on(t.createdAt), uniqueIndex('login_events_dedupe_unique').on(t.dedupeKey)],
);

// ---------------------------------------------------------------------------------------
// The admin UI's own state

/** Instance-wide settings as JSON documents (`instanceInfo`: `{id}` made at migration). */
export const settings = sqliteTable('settings', {
  name: text('name').primaryKey(),
  content: text('content', { mode: 'json' }).notNull(),
});

/**
 * Message banners an admin shows at the top of every page of the UI (Unleash's `banners`
 * table): optional texts stay NULL when not given; the id counts up, so newer is higher.
 */
export const banners = sqliteTable('banners', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  enabled: bool('enabled').notNull().default(true),
  message: text('message').notNull(),
  variant: text('variant').notNull().default('info'),
  sticky: bool('sticky').notNull().default(false),
  icon: text('icon'),
  link: text('link'),
  linkText: text('link_text'),
  dialogTitle: text('dialog_title'),
  dialog: text('dialog'),
  createdAt: createdAt(),
});

/** Splash screens a person has dismissed (`POST /api/admin/splash/:id`). */
export const userSplash = sqliteTable(
  'user_splash',
  {
    userId: integer('user_id').notNull(),
    splashId: text('splash_id').notNull(),
    seen: bool('seen').notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.userId, t.splashId] })],
);

/**
 * Feedback questionnaires a person has answered or dismissed (`POST /api/admin/feedback`), one
 * row per person and questionnaire; the service caps how many one person may hold.
 */
export const userFeedback = sqliteTable(
  'user_feedback',
  {
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    feedbackId: text('feedback_id').notNull(),
    given: text('given'),
    neverShow: bool('never_show').notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.userId, t.feedbackId] })],
);

// SDK change log (migration 0010): written by a trigger on `events`, read by the delta and
// streaming client APIs. See migrations/0010_sdk_changes.sql for what each kind means.

export const sdkChanges = sqliteTable('sdk_changes', {
  eventId: integer('event_id').primaryKey(),
  kind: text('kind', { enum: ['feature', 'segment', 'all'] }).notNull(),
  featureName: text('feature_name'),
  project: text('project'),
  environment: text('environment'),
  segmentId: integer('segment_id'),
});

// ---------------------------------------------------------------------------------------
// Integrations (Unleash's addons) and their deliveries

/** An integration: its provider, parameters (secrets among them) and what it listens to. */
export const addons = sqliteTable('addons', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  provider: text('provider').notNull(),
  description: text('description'),
  enabled: bool('enabled').notNull().default(true),
  parameters: text('parameters', { mode: 'json' }).$type<Record<string, string | number | boolean>>().notNull(),
  events: text('events', { mode: 'json' }).$type<string[]>().notNull(),
  projects: text('projects', { mode: 'json' }).$type<string[]>().notNull(),
  environments: text('environments', { mode: 'json' }).$type<string[]>().notNull(),
  createdAt: createdAt(),
});

/**
 * One row per audit event an enabled integration subscribes to, written by a trigger on
 * `events` in the same batch as the event (migration `addon_deliveries_trigger`): the outbox
 * the Queue is fed from, and the record that keeps a retried message from being sent twice.
 * `queuedAt` null: not on the Queue yet. `status`: `pending`, `sending` (claimed until
 * `leaseUntil`), `sent` or `failed`.
 */
export const addonDeliveries = sqliteTable(
  'addon_deliveries',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    addonId: integer('addon_id')
      .notNull()
      .references(() => addons.id, { onDelete: 'cascade' }),
    eventId: integer('event_id').notNull(),
    featureName: text('feature_name'),
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    leaseUntil: text('lease_until'),
    queuedAt: text('queued_at'),
    /**
     * What each target of the delivery answered, by target (a Slack channel; `default` for the
     * one URL of the other providers): a target that answered 2xx is not sent again on a retry.
     */
    targets: text('targets', { mode: 'json' }).$type<Record<string, { ok: boolean; detail: string }>>(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('addon_deliveries_addon_event_unique').on(t.addonId, t.eventId),
    index('addon_deliveries_unqueued_idx').on(t.queuedAt),
    index('addon_deliveries_feature_idx').on(t.addonId, t.featureName, t.status),
  ],
);

/** What each integration did with each event (`GET /api/admin/addons/:id/events`). */
export const integrationEvents = sqliteTable(
  'integration_events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    integrationId: integer('integration_id')
      .notNull()
      .references(() => addons.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
    state: text('state').notNull(),
    stateDetails: text('state_details').notNull(),
    event: text('event', { mode: 'json' }).notNull(),
    details: text('details', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
  },
  (t) => [index('integration_events_integration_idx').on(t.integrationId, t.id)],
);

// ---------------------------------------------------------------------------------------
// Change requests (docs/change-requests.md)

/** Whether a project's environment needs change requests, and how many approvals one needs. */
export const changeRequestSettings = sqliteTable(
  'change_request_settings',
  {
    project: text('project')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    environment: text('environment')
      .notNull()
      .references(() => environments.name, { onDelete: 'cascade' }),
    enabled: bool('enabled').notNull().default(false),
    requiredApprovals: integer('required_approvals').notNull().default(1),
  },
  (t) => [primaryKey({ columns: [t.project, t.environment] })],
);

/** Draft, In review, Approved, Scheduled, Applied, Rejected or Cancelled. */
export const changeRequests = sqliteTable(
  'change_requests',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    project: text('project')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    environment: text('environment').notNull(),
    title: text('title'),
    state: text('state').notNull().default('Draft'),
    /** The approvals it needed when it was sent to review (later settings do not move it). */
    minApprovals: integer('min_approvals').notNull().default(1),
    createdByUserId: integer('created_by_user_id').notNull(),
    createdByName: text('created_by_name').notNull(),
    createdAt: createdAt(),
    /** When it entered each state, by state. */
    stateTimestamps: text('state_timestamps', { mode: 'json' }).$type<Record<string, string>>().notNull(),
    scheduledAt: text('scheduled_at'),
    /** `pending` or `failed` while Scheduled (or after a scheduled run failed). */
    scheduleStatus: text('schedule_status'),
    scheduleFailure: text('schedule_failure'),
    /** Who scheduled it: the scheduled run applies it in their name. */
    scheduledByUserId: integer('scheduled_by_user_id'),
    scheduledByName: text('scheduled_by_name'),
  },
  (t) => [
    index('change_requests_project_state_idx').on(t.project, t.state),
    index('change_requests_scheduled_idx').on(t.state, t.scheduledAt),
  ],
);

/** One change of a change request: what the direct write would have been, and what it saw. */
export const changeRequestChanges = sqliteTable(
  'change_request_changes',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    changeRequestId: integer('change_request_id')
      .notNull()
      .references(() => changeRequests.id, { onDelete: 'cascade' }),
    feature: text('feature').notNull(),
    action: text('action').notNull(),
    payload: text('payload', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    /** The state of what the change touches when it was drafted; a different state now is a conflict. */
    base: text('base'),
    createdByUserId: integer('created_by_user_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('change_request_changes_request_idx').on(t.changeRequestId), index('change_request_changes_feature_idx').on(t.feature)],
);

/** Approvals (`verdict` approved) and rejections, one per person and request. */
export const changeRequestReviews = sqliteTable(
  'change_request_reviews',
  {
    changeRequestId: integer('change_request_id')
      .notNull()
      .references(() => changeRequests.id, { onDelete: 'cascade' }),
    userId: integer('user_id').notNull(),
    verdict: text('verdict').notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.changeRequestId, t.userId] })],
);

export const changeRequestComments = sqliteTable(
  'change_request_comments',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    changeRequestId: integer('change_request_id')
      .notNull()
      .references(() => changeRequests.id, { onDelete: 'cascade' }),
    text: text('text').notNull(),
    createdByUserId: integer('created_by_user_id').notNull(),
    createdByName: text('created_by_name').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('change_request_comments_request_idx').on(t.changeRequestId)],
);

/**
 * Impact metrics (Unleash 8): the counters, gauges and histograms SDKs and Edge send beside
 * their usage counts, one row per metric name (its type and first help text, as 8.2.0's
 * registry keeps them; `rowid` order is the order they were first seen) and one per series
 * (name and label set) in `impact_metric_series`. Written only by the metrics Queue's consumer;
 * series not updated for a week are pruned by the cron (docs/metrics.md).
 */
export const impactMetrics = sqliteTable(
  'impact_metrics',
  {
    name: text('name').primaryKey(),
    type: text('type', { enum: ['counter', 'gauge', 'histogram'] }).notNull(),
    help: text('help').notNull(),
    seenAt: text('seen_at').notNull(),
  },
  (t) => [index('impact_metrics_seen_idx').on(t.seenAt)],
);

export const impactMetricSeries = sqliteTable(
  'impact_metric_series',
  {
    name: text('name').notNull(),
    /** The label set, sorted by label name, as JSON `[[name, value], ...]`: the series' identity. */
    series: text('series').notNull(),
    /** The same labels in the order first sent (how 8.2.0 prints a counter's or gauge's labels). */
    labels: text('labels').notNull(),
    type: text('type', { enum: ['counter', 'gauge', 'histogram'] }).notNull(),
    /** A counter's sum or a gauge's last value; a histogram's sum of observations. */
    value: real('value').notNull(),
    /** A histogram's observation count (0 otherwise). */
    count: real('count').notNull(),
    /** A histogram's buckets as JSON `{"<le>": count}` (`{}` otherwise). */
    buckets: text('buckets').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.name, t.series] }), index('impact_metric_series_updated_idx').on(t.updatedAt)],
);
