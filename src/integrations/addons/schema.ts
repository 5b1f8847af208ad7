import * as v from 'valibot';

const parameterValue = v.union([v.string(), v.number(), v.boolean()], 'must be one of [string, number, boolean]');

/**
 * What creating or updating an integration sends (Unleash's addonCreateUpdateSchema). Keys
 * Unleash does not know are dropped, as it drops them; `description` may be null.
 */
export const AddonCreateUpdateSchema = v.object({
  provider: v.pipe(v.string(), v.nonEmpty('must not be empty'), v.maxLength(100, 'must be at most 100 characters')),
  description: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(1000, 'must be at most 1000 characters')))),
  enabled: v.boolean(),
  parameters: v.record(v.string(), parameterValue),
  events: v.pipe(v.array(v.string()), v.maxLength(200, 'must have at most 200 items')),
  projects: v.optional(v.pipe(v.array(v.string()), v.maxLength(1000, 'must have at most 1000 items'))),
  environments: v.optional(v.pipe(v.array(v.string()), v.maxLength(1000, 'must have at most 1000 items'))),
});
export type AddonCreateUpdate = v.InferOutput<typeof AddonCreateUpdateSchema>;

/** `GET /api/admin/addons/:id/events`: Unleash's page size (1..100, else 50) and offset. */
export const IntegrationEventsQuery = v.object({
  limit: v.optional(v.string()),
  offset: v.optional(v.string()),
});

/** One integration, its secrets masked (Unleash's addonSchema). */
export const AddonAnswer = v.object({
  id: v.pipe(v.number(), v.integer(), v.minValue(1)),
  provider: v.string(),
  enabled: v.boolean(),
  description: v.nullable(v.string()),
  parameters: v.record(v.string(), v.unknown()),
  events: v.array(v.string()),
  projects: v.array(v.string()),
  environments: v.array(v.string()),
  createdAt: v.optional(v.string()),
});

const ParameterDefinition = v.object({
  name: v.string(),
  displayName: v.string(),
  type: v.string(),
  description: v.optional(v.string()),
  placeholder: v.optional(v.string()),
  required: v.boolean(),
  sensitive: v.boolean(),
});

const ProviderAnswer = v.looseObject({
  name: v.string(),
  displayName: v.string(),
  documentationUrl: v.string(),
  description: v.string(),
  howTo: v.optional(v.string()),
  parameters: v.optional(v.array(ParameterDefinition)),
  events: v.optional(v.array(v.string())),
});

/** `GET /api/admin/addons` (Unleash's addonsSchema). */
export const AddonsAnswer = v.object({
  addons: v.array(AddonAnswer),
  providers: v.array(ProviderAnswer),
});

/** One entry of an integration's delivery log (Unleash's integrationEventSchema). */
const IntegrationEventAnswer = v.object({
  id: v.pipe(v.string(), v.regex(/^[0-9]+$/)),
  integrationId: v.number(),
  createdAt: v.string(),
  state: v.picklist(['success', 'failed', 'successWithErrors']),
  stateDetails: v.string(),
  event: v.record(v.string(), v.unknown()),
  details: v.record(v.string(), v.unknown()),
});

export const IntegrationEventsAnswer = v.object({ integrationEvents: v.array(IntegrationEventAnswer) });
