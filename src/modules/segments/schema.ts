import * as v from 'valibot';
import { integerId, nonBlank, text } from '../../http/validation';
import { ConstraintSchema } from '../features/schema';

/** A segment as created or replaced. */
export const SegmentSchema = v.object({
  name: nonBlank(255),
  description: v.optional(v.nullable(text(1000))),
  project: v.optional(v.nullable(nonBlank(100))),
  constraints: v.optional(v.pipe(v.array(ConstraintSchema), v.maxLength(100, 'must have at most 100 items')), []),
});
export type SegmentInput = v.InferOutput<typeof SegmentSchema>;

/** A segment id in the path. */
export const SegmentIdParams = v.object({ id: integerId });

/** What `GET /api/admin/segments` answers with status 200. */
export const GetSegmentsResponse = v.object({
  segments: v.array(
    v.object({
      id: v.number(),
      name: v.nullable(v.string()),
      description: v.nullable(v.string()),
      constraints: v.array(
        v.object({
          contextName: v.string(),
          operator: v.string(),
          values: v.optional(v.array(v.string())),
        }),
      ),
      project: v.nullable(v.string()),
      createdBy: v.nullable(v.string()),
      createdAt: v.string(),
    }),
  ),
});

/** What `POST /api/admin/segments` answers with status 201. */
export const CreateSegment201Response = v.object({
  id: v.number(),
  name: v.nullable(v.string()),
  description: v.nullable(v.string()),
  constraints: v.array(
    v.object({
      contextName: v.string(),
      operator: v.string(),
      values: v.optional(v.array(v.string())),
    }),
  ),
  project: v.nullable(v.string()),
  createdBy: v.nullable(v.string()),
  createdAt: v.string(),
});

/** What `GET /api/admin/segments/:id` answers with status 200. */
export const GetSegmentResponse = v.object({
  id: v.number(),
  name: v.nullable(v.string()),
  description: v.nullable(v.string()),
  constraints: v.array(
    v.object({
      contextName: v.string(),
      operator: v.string(),
      values: v.optional(v.array(v.string())),
    }),
  ),
  project: v.nullable(v.string()),
  createdBy: v.nullable(v.string()),
  createdAt: v.string(),
});
