import * as v from 'valibot';
import { dateTime, text } from '../../http/validation';

/** A questionnaire's name: Unleash takes a number too and stores its text. */
const FeedbackId = v.pipe(
  v.union([v.string(), v.number()], 'must be string'),
  v.transform((value) => String(value)),
  v.minLength(1, 'must NOT have fewer than 1 characters'),
  v.maxLength(100, 'must NOT have more than 100 characters'),
);

export const CreateFeedbackSchema = v.object({
  feedbackId: FeedbackId,
  neverShow: v.optional(v.boolean('must be boolean')),
});
export type CreateFeedbackInput = v.InferOutput<typeof CreateFeedbackSchema>;

export const UpdateFeedbackSchema = v.object({
  userId: v.optional(v.pipe(v.number('must be integer'), v.integer('must be integer'))),
  neverShow: v.optional(v.boolean('must be boolean')),
  given: v.optional(v.nullable(dateTime)),
});
export type UpdateFeedbackInput = v.InferOutput<typeof UpdateFeedbackSchema>;

export const FeedbackParams = v.object({ id: text(100) });

/** What `POST /api/admin/feedback` and `PUT /api/admin/feedback/:id` answer with status 200. */
export const FeedbackResponse = v.object({
  neverShow: v.boolean(),
  feedbackId: v.string(),
  given: v.nullable(v.string()),
  userId: v.number(),
});
export type Feedback = v.InferOutput<typeof FeedbackResponse>;
