import * as v from 'valibot';
import { nonBlank, text, urlFriendlyName } from '../../http/validation';
import { DefaultStrategyResponse } from '../environments/schema';

export const CreateProjectSchema = v.object({
  id: urlFriendlyName(100),
  name: nonBlank(255),
  description: v.optional(v.nullable(text(1000))),
  mode: v.optional(
    v.picklist(['open', 'protected', 'private'], 'must be equal to one of the allowed values: "open", "protected", "private"'),
    'open',
  ),
  defaultStickiness: v.optional(nonBlank(100), 'default'),
  environments: v.optional(v.pipe(v.array(nonBlank(100)), v.maxLength(100, 'must have at most 100 items'))),
  // Unleash Enterprise's create dialog: change requests on in these environments from the start.
  changeRequestEnvironments: v.optional(
    v.pipe(
      v.array(v.object({ name: nonBlank(100), requiredApprovals: v.optional(v.pipe(v.number(), v.integer('must be integer'))) })),
      v.maxLength(100, 'must have at most 100 items'),
    ),
  ),
});
export type CreateProjectInput = v.InferOutput<typeof CreateProjectSchema>;

const Mode = v.picklist(['open', 'protected', 'private'], 'must be equal to one of the allowed values: "open", "protected", "private"');

/** `PUT /api/admin/projects/:id` (Unleash Enterprise's updateProjectSchema). */
export const UpdateProjectSchema = v.object({
  name: nonBlank(255),
  description: v.optional(v.nullable(text(1000))),
  mode: v.optional(Mode),
  defaultStickiness: v.optional(nonBlank(100)),
});
export type UpdateProjectInput = v.InferOutput<typeof UpdateProjectSchema>;

/** `?archived=true`: the archived projects (or flags) instead of the live ones. */
export const ArchivedQuery = v.object({ archived: v.optional(v.string()) });

export const AttachEnvironmentSchema = v.object({ environment: nonBlank(100) });
export type AttachEnvironmentInput = v.InferOutput<typeof AttachEnvironmentSchema>;

const ProjectAnswer = v.object({
  id: v.string(),
  name: v.nullable(v.string()),
  description: v.nullable(v.string()),
  health: v.number(),
  featureCount: v.number(),
  memberCount: v.number(),
  createdAt: v.string(),
  archivedAt: v.nullable(v.string()),
  mode: v.string(),
  defaultStickiness: v.string(),
  environments: v.array(v.string()),
});

const OwnerAnswer = v.union([
  v.object({ ownerType: v.literal('system') }),
  v.object({ ownerType: v.literal('user'), name: v.nullable(v.string()), email: v.nullable(v.string()), imageUrl: v.string() }),
]);

/** What `GET /api/admin/projects` answers with status 200. */
export const GetProjectsResponse = v.object({
  version: v.number(),
  projects: v.array(
    v.object({
      name: v.string(),
      id: v.string(),
      description: v.nullable(v.string()),
      health: v.number(),
      technicalDebt: v.number(),
      favorite: v.optional(v.boolean()),
      featureCount: v.number(),
      memberCount: v.number(),
      createdAt: v.string(),
      archivedAt: v.nullable(v.string()),
      mode: v.string(),
      lastReportedFlagUsage: v.nullable(v.string()),
      lastUpdatedAt: v.nullable(v.string()),
      onboardingStatus: v.object({ status: v.string(), feature: v.optional(v.string()) }),
      owners: v.array(OwnerAnswer),
    }),
  ),
});

/** What `POST /api/admin/projects` answers with status 201. */
export const CreateProject201Response = ProjectAnswer;

export const ProjectStats = v.object({
  avgTimeToProdCurrentWindow: v.number(),
  createdCurrentWindow: v.number(),
  createdPastWindow: v.number(),
  archivedCurrentWindow: v.number(),
  archivedPastWindow: v.number(),
  projectActivityCurrentWindow: v.number(),
  projectActivityPastWindow: v.number(),
  projectMembersAddedCurrentWindow: v.number(),
});

const ProjectEnvironmentAnswer = v.object({
  environment: v.string(),
  defaultStrategy: v.optional(DefaultStrategyResponse),
});

const FlagTag = v.object({ value: v.string(), type: v.string() });

/** A flag as the project pages list it: its environments' state and its tags. */
export const FeatureOverview = v.object({
  type: v.string(),
  description: v.nullable(v.string()),
  favorite: v.optional(v.boolean()),
  name: v.string(),
  createdAt: v.string(),
  stale: v.boolean(),
  impressionData: v.boolean(),
  lastSeenAt: v.nullable(v.string()),
  environments: v.array(
    v.object({
      name: v.string(),
      enabled: v.boolean(),
      type: v.string(),
      sortOrder: v.number(),
      variantCount: v.number(),
      lastSeenAt: v.nullable(v.string()),
      hasStrategies: v.boolean(),
      hasEnabledStrategies: v.boolean(),
    }),
  ),
  tags: v.optional(v.array(FlagTag)),
});

/** What `GET /api/admin/projects/:projectId` answers with status 200. */
export const GetDeprecatedProjectOverviewResponse = v.object({
  stats: ProjectStats,
  name: v.string(),
  description: v.nullable(v.string()),
  mode: v.string(),
  featureLimit: v.nullable(v.number()),
  featureNaming: v.object({ pattern: v.nullable(v.string()), example: v.nullable(v.string()), description: v.nullable(v.string()) }),
  defaultStickiness: v.string(),
  health: v.number(),
  favorite: v.boolean(),
  updatedAt: v.nullable(v.string()),
  createdAt: v.string(),
  environments: v.array(ProjectEnvironmentAnswer),
  features: v.array(FeatureOverview),
  members: v.number(),
  version: v.number(),
});

/** What `GET /api/admin/projects/:projectId/overview` answers with status 200. */
export const GetProjectOverviewResponse = v.object({
  stats: v.object({
    avgTimeToProdCurrentWindow: v.number(),
    createdCurrentWindow: v.number(),
    createdPastWindow: v.number(),
    archivedCurrentWindow: v.number(),
    archivedPastWindow: v.number(),
    projectActivityCurrentWindow: v.number(),
    projectActivityPastWindow: v.number(),
    projectMembersAddedCurrentWindow: v.number(),
  }),
  name: v.nullable(v.string()),
  description: v.nullable(v.string()),
  mode: v.string(),
  featureLimit: v.nullable(v.number()),
  featureNaming: v.object({
    pattern: v.nullable(v.string()),
    example: v.nullable(v.string()),
    description: v.nullable(v.string()),
  }),
  linkTemplates: v.array(v.object({ title: v.nullable(v.string()), urlTemplate: v.string() })),
  defaultStickiness: v.string(),
  health: v.number(),
  technicalDebt: v.number(),
  favorite: v.boolean(),
  updatedAt: v.nullable(v.string()),
  createdAt: v.string(),
  onboardingStatus: v.object({
    status: v.string(),
    feature: v.optional(v.string()),
  }),
  environments: v.array(ProjectEnvironmentAnswer),
  featureTypeCounts: v.array(
    v.object({
      type: v.string(),
      count: v.number(),
    }),
  ),
  members: v.number(),
  version: v.number(),
});

/** What `GET /api/admin/projects/:projectId/flag-creators` answers with status 200. */
export const GetProjectFlagCreatorsResponse = v.array(
  v.object({
    id: v.number(),
    name: v.nullable(v.string()),
  }),
);

/** What `GET /api/admin/projects/:projectId/dependencies` answers with status 200. */
export const CheckDependenciesExistResponse = v.boolean();
