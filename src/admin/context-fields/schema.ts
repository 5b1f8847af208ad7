import * as v from 'valibot';
import { text, urlFriendlyName } from '../../http/validation';

/** A legal value as answered (Unleash's legalValueSchema). */
const LegalValueAnswer = v.object({ value: v.string(), description: v.optional(v.string()) });

/** What `GET /api/admin/context` answers with status 200. */
export const GetContextFieldsResponse = v.array(
  v.object({
    name: v.nullable(v.string()),
    description: v.nullable(v.string()),
    stickiness: v.boolean(),
    sortOrder: v.number(),
    legalValues: v.array(LegalValueAnswer),
    createdAt: v.string(),
    usedInProjects: v.number(),
    usedInFeatures: v.number(),
  }),
);

/** What `GET /api/admin/context/:name` answers with status 200. */
export const GetContextFieldResponse = v.object({
  name: v.nullable(v.string()),
  description: v.nullable(v.string()),
  stickiness: v.boolean(),
  sortOrder: v.number(),
  legalValues: v.array(LegalValueAnswer),
  createdAt: v.string(),
  project: v.optional(v.string()),
});

/** One allowed value of a context field. */
export const LegalValueSchema = v.object({
  value: v.pipe(text(100), v.nonEmpty('must not be empty')),
  description: v.optional(v.nullable(text(1000))),
});

const LegalValues = v.pipe(v.array(LegalValueSchema), v.maxLength(1000, 'must have at most 1000 items'));

/** A context field as updated: the name is the path's. */
export const UpdateContextFieldSchema = v.object({
  description: v.optional(v.nullable(text(250))),
  stickiness: v.optional(v.boolean()),
  sortOrder: v.optional(v.pipe(v.number(), v.integer('must be integer'), v.minValue(-2147483648), v.maxValue(2147483647))),
  legalValues: v.optional(v.nullable(LegalValues)),
});
export type ContextFieldUpdate = v.InferOutput<typeof UpdateContextFieldSchema>;

/** A context field as created. */
export const CreateContextFieldSchema = v.object({ name: urlFriendlyName(100), ...UpdateContextFieldSchema.entries });
export type ContextFieldInput = v.InferOutput<typeof CreateContextFieldSchema>;

/** A name to check before creating. */
export const ContextNameSchema = v.object({ name: urlFriendlyName(100) });

/** What `GET /api/admin/context/:name/strategies` answers with status 200. */
export const ContextFieldStrategiesResponse = v.object({
  strategies: v.array(
    v.object({
      id: v.string(),
      projectId: v.string(),
      featureName: v.string(),
      strategyName: v.string(),
      environment: v.string(),
    }),
  ),
});
