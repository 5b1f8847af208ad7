import * as v from 'valibot';
import { PATTERNS } from './params';

/** What `GET /api/admin/search/features` answers with status 200. */
export const SearchFeaturesResponse = v.object({
  features: v.array(
    v.object({
      type: v.string(),
      description: v.nullable(v.string()),
      project: v.nullable(v.string()),
      favorite: v.boolean(),
      name: v.nullable(v.string()),
      createdAt: v.string(),
      stale: v.boolean(),
      archivedAt: v.nullable(v.string()),
      impressionData: v.boolean(),
      lastSeenAt: v.nullable(v.string()),
      dependencyType: v.nullable(v.string()),
      environments: v.array(
        v.object({
          name: v.nullable(v.string()),
          environment: v.nullable(v.string()),
          enabled: v.boolean(),
          type: v.string(),
          sortOrder: v.number(),
          variantCount: v.number(),
          lastSeenAt: v.nullable(v.string()),
          hasStrategies: v.boolean(),
          hasEnabledStrategies: v.boolean(),
          yes: v.number(),
          no: v.number(),
          // Always empty: there are no change requests here.
          changeRequestIds: v.array(v.number()),
        }),
      ),
      segments: v.array(v.string()),
      createdBy: v.object({
        id: v.number(),
        name: v.nullable(v.string()),
        imageUrl: v.nullable(v.string()),
      }),
      // null for a flag with no lifecycle stage recorded (service.ts).
      lifecycle: v.nullable(
        v.object({
          stage: v.string(),
          status: v.nullable(v.string()),
          enteredStageAt: v.string(),
        }),
      ),
      tags: v.array(
        v.object({
          value: v.optional(v.string()),
          type: v.string(),
          color: v.nullable(v.string()),
        }),
      ),
    }),
  ),
  total: v.number(),
});

const searchFilter = (pattern: string) => v.optional(v.pipe(v.string(), v.regex(new RegExp(pattern))));
/** The query parameters of the search, for the document: `params.ts` parses them (with their exact error messages). */
export const SearchQuery = v.object({
  query: v.optional(v.pipe(v.string(), v.description('Comma-separated terms matched against name, description and tag values'))),
  project: searchFilter(PATTERNS.operator),
  state: searchFilter(PATTERNS.operator),
  type: searchFilter(PATTERNS.operator),
  lifecycle: searchFilter(PATTERNS.operator),
  createdBy: searchFilter(PATTERNS.operator),
  tag: searchFilter(PATTERNS.tag),
  segment: searchFilter(PATTERNS.segment),
  status: v.optional(v.pipe(v.string(), v.description('`<environment>:enabled|disabled`; repeatable'))),
  createdAt: searchFilter(PATTERNS.date),
  lastSeenAt: searchFilter(PATTERNS.date),
  favorite: searchFilter(PATTERNS.favorite),
  archived: searchFilter(PATTERNS.archived),
  offset: v.optional(v.pipe(v.string(), v.description('Default 0'))),
  limit: v.optional(v.pipe(v.string(), v.description('1..100, default 50'))),
  sortBy: v.optional(v.pipe(v.string(), v.description('createdAt (default), name, type, stale, project, lastSeenAt, environment:<env>'))),
  sortOrder: v.optional(v.picklist(['asc', 'desc'])),
  favoritesFirst: v.optional(v.picklist(['true', 'false'])),
});
