import * as v from 'valibot';

const SegmentAnswer = v.object({
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

/** What `GET /api/admin/segments` answers with status 200. */
export const GetSegmentsResponse = v.object({
  segments: v.array(SegmentAnswer),
});

/** What `POST /api/admin/segments` answers with status 201. */
export const CreateSegment201Response = SegmentAnswer;

/** What `GET /api/admin/segments/:id` answers with status 200. */
export const GetSegmentResponse = SegmentAnswer;
