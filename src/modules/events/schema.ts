import * as v from 'valibot';

/** What `GET /api/admin/search/events` answers with status 200. */
export const SearchEventsResponse = v.object({
  events: v.array(
    v.object({
      id: v.number(),
      type: v.string(),
      createdBy: v.nullable(v.string()),
      createdAt: v.string(),
      createdByUserId: v.number(),
      data: v.record(
        v.string(),
        v.nullable(
          v.union([
            v.array(v.string()),
            v.boolean(),
            v.number(),
            v.object({
              rollout: v.optional(v.string()),
              stickiness: v.optional(v.string()),
              groupId: v.optional(v.string()),
            }),
            v.string(),
          ]),
        ),
      ),
      preData: v.nullable(
        v.object({
          enabled: v.boolean(),
        }),
      ),
      tags: v.array(
        v.object({
          value: v.optional(v.string()),
          type: v.string(),
        }),
      ),
      featureName: v.nullable(v.string()),
      project: v.nullable(v.string()),
      environment: v.nullable(v.string()),
      label: v.string(),
      summary: v.string(),
    }),
  ),
  total: v.number(),
});

/** What `GET /api/admin/events` answers with status 200. */
export const GetEventsResponse = v.object({
  version: v.number(),
  events: v.array(
    v.object({
      id: v.number(),
      type: v.string(),
      createdBy: v.nullable(v.string()),
      createdAt: v.string(),
      createdByUserId: v.number(),
      data: v.record(
        v.string(),
        v.nullable(
          v.union([
            v.array(
              v.union([
                v.object({
                  name: v.optional(v.string()),
                  weight: v.optional(v.number()),
                  weightType: v.optional(v.string()),
                  stickiness: v.optional(v.string()),
                  roleId: v.optional(v.number()),
                  groupIds: v.optional(v.array(v.unknown())),
                  userIds: v.optional(v.array(v.number())),
                  environment: v.optional(v.string()),
                }),
                v.string(),
              ]),
            ),
            v.boolean(),
            v.number(),
            v.object({
              rollout: v.optional(v.string()),
              stickiness: v.optional(v.string()),
              groupId: v.optional(v.string()),
              id: v.optional(v.number()),
              type: v.optional(v.string()),
              name: v.optional(v.string()),
              description: v.optional(v.string()),
              project: v.optional(v.null()),
            }),
            v.string(),
          ]),
        ),
      ),
      preData: v.nullable(
        v.object({
          variants: v.optional(
            v.array(
              v.object({
                name: v.nullable(v.string()),
                weight: v.number(),
                weightType: v.string(),
                stickiness: v.string(),
              }),
            ),
          ),
          enabled: v.optional(v.boolean()),
        }),
      ),
      tags: v.array(
        v.object({
          value: v.optional(v.string()),
          type: v.string(),
        }),
      ),
      featureName: v.nullable(v.string()),
      project: v.nullable(v.string()),
      environment: v.nullable(v.string()),
    }),
  ),
  totalEvents: v.number(),
});

/** What `GET /api/admin/events/:featureName` answers with status 200. */
export const GetEventsForToggleResponse = v.object({
  version: v.number(),
  toggleName: v.string(),
  events: v.array(
    v.object({
      id: v.number(),
      type: v.string(),
      createdBy: v.nullable(v.string()),
      createdAt: v.string(),
      createdByUserId: v.number(),
      data: v.object({
        name: v.nullable(v.string()),
        project: v.nullable(v.string()),
        description: v.nullable(v.string()),
        type: v.string(),
        impressionData: v.boolean(),
        stale: v.boolean(),
        createdAt: v.string(),
        createdByUserId: v.number(),
      }),
      preData: v.null(),
      tags: v.array(v.unknown()),
      featureName: v.string(),
      project: v.nullable(v.string()),
      environment: v.nullable(v.string()),
    }),
  ),
  totalEvents: v.number(),
});

/** What `GET /api/admin/event-creators` answers with status 200. */
export const GetEventCreatorsResponse = v.array(
  v.object({
    id: v.number(),
    name: v.nullable(v.string()),
  }),
);
