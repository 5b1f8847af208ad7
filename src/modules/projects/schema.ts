import * as v from 'valibot';

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

/** What `GET /api/admin/projects` answers with status 200. */
export const GetProjectsResponse = v.object({
  version: v.number(),
  projects: v.array(ProjectAnswer),
});

/** What `POST /api/admin/projects` answers with status 201. */
export const CreateProject201Response = ProjectAnswer;

/** What `GET /api/admin/projects/:projectId` answers with status 200. */
export const GetDeprecatedProjectOverviewResponse = ProjectAnswer;

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
  featureLimit: v.null(),
  featureNaming: v.object({
    pattern: v.null(),
    example: v.null(),
    description: v.nullable(v.string()),
  }),
  defaultStickiness: v.string(),
  health: v.number(),
  favorite: v.boolean(),
  updatedAt: v.nullable(v.string()),
  createdAt: v.string(),
  onboardingStatus: v.object({
    status: v.string(),
    feature: v.string(),
  }),
  environments: v.array(
    v.object({
      environment: v.nullable(v.string()),
    }),
  ),
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
