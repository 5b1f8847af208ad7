import * as v from 'valibot';
import { integerId, nonBlank, text } from '../../http/validation';
import { ConstraintAnswer, ConstraintSchema } from '../features/schema';

/** A segment as created or replaced. */
export const SegmentSchema = v.object({
  name: nonBlank(255),
  description: v.optional(v.nullable(text(1000))),
  project: v.optional(v.nullable(nonBlank(100))),
  // Required, as 6.10.1's schema has it (an empty list is a segment without constraints).
  constraints: v.pipe(v.array(ConstraintSchema), v.maxLength(100, 'must have at most 100 items')),
});
export type SegmentInput = v.InferOutput<typeof SegmentSchema>;

/** A segment id in the path. */
export const SegmentIdParams = v.object({ id: integerId });

/** A segment as the admin API answers it. */
const SegmentAnswer = v.object({
  id: v.number(),
  name: v.nullable(v.string()),
  description: v.nullable(v.string()),
  constraints: v.array(ConstraintAnswer),
  project: v.optional(v.string()),
  createdBy: v.nullable(v.string()),
  createdAt: v.string(),
});

/** What `GET /api/admin/segments` answers with status 200: each segment with where it is used. */
export const GetSegmentsResponse = v.object({
  segments: v.array(v.object({ ...SegmentAnswer.entries, usedInProjects: v.number(), usedInFeatures: v.number() })),
});

/** What `POST /api/admin/segments` answers with status 201. */
export const CreateSegment201Response = SegmentAnswer;

/** What `GET /api/admin/segments/:id` answers with status 200. */
export const GetSegmentResponse = SegmentAnswer;

/** A segment name to check before creating. */
export const SegmentNameSchema = v.object({ name: text(255) });

/** The segments one strategy should use from now on. */
export const StrategySegmentsSchema = v.object({
  projectId: nonBlank(100),
  environmentId: nonBlank(100),
  strategyId: nonBlank(100),
  segmentIds: v.pipe(
    v.array(
      v.pipe(v.number(), v.integer('must be integer'), v.minValue(0, 'must be >= 0'), v.maxValue(2147483647, 'must be <= 2147483647')),
    ),
    v.maxLength(100, 'must have at most 100 items'),
  ),
});
export type StrategySegmentsInput = v.InferOutput<typeof StrategySegmentsSchema>;

/** What `GET /api/admin/segments/strategies/:strategyId` answers with status 200. */
export const SegmentsOfStrategyResponse = v.object({ segments: v.array(SegmentAnswer) });

const StrategyReference = v.object({
  id: v.string(),
  projectId: v.string(),
  featureName: v.string(),
  strategyName: v.string(),
  environment: v.string(),
});

/** What `GET /api/admin/segments/:id/strategies` answers with status 200. */
export const SegmentStrategiesResponse = v.object({
  strategies: v.array(StrategyReference),
  // Strategies that open change requests would give the segment (Unleash's shape: no `id` for a
  // strategy the request would add; the request's title null when it has none).
  changeRequestStrategies: v.array(
    v.object({
      ...v.partial(StrategyReference, ['id']).entries,
      changeRequest: v.object({ id: v.number(), title: v.nullable(v.string()) }),
    }),
  ),
});

/** What `POST /api/admin/segments/strategies` answers with status 201: what was asked. */
export const StrategySegmentsResponse = StrategySegmentsSchema;
