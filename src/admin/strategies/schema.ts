import * as v from 'valibot';
import { text, urlFriendlyName } from '../../http/validation';

const StrategyParameterSchema = v.object({
  name: text(100),
  type: text(100),
  description: v.optional(v.nullable(text(1000))),
  required: v.optional(v.boolean()),
});

const strategyFields = {
  title: v.optional(v.nullable(text(255))),
  disabled: v.optional(v.nullable(v.boolean())),
  editable: v.optional(v.boolean()),
  deprecated: v.optional(v.boolean()),
  description: v.optional(v.nullable(text(1000))),
  parameters: v.pipe(v.array(StrategyParameterSchema), v.maxLength(100, 'must have at most 100 parameters')),
};

/** A custom strategy definition, as the UI's form sends it (unknown fields are dropped, as Unleash does). */
export const CreateStrategySchema = v.object({ name: urlFriendlyName(100, 1), ...strategyFields });

/** The same form for an update: the path names the definition, a `name` in the body is ignored. */
export const UpdateStrategySchema = v.object({ name: v.optional(v.unknown()), ...strategyFields });

export type StrategyInput = Omit<v.InferOutput<typeof UpdateStrategySchema>, 'name'>;

/** A strategy definition as the admin API answers it. */
const StrategyDefinitionAnswer = v.object({
  displayName: v.nullable(v.string()),
  name: v.nullable(v.string()),
  editable: v.boolean(),
  description: v.nullable(v.string()),
  parameters: v.array(
    v.object({
      name: v.nullable(v.string()),
      type: v.string(),
      description: v.optional(v.nullable(v.string())),
      required: v.optional(v.boolean()),
    }),
  ),
  deprecated: v.boolean(),
  title: v.nullable(v.string()),
});

/** What `GET /api/admin/strategies` answers with status 200. */
export const GetAllStrategiesResponse = v.object({ version: v.number(), strategies: v.array(StrategyDefinitionAnswer) });

/** What `GET /api/admin/strategies/:name` answers with status 200. */
export const GetStrategyResponse = StrategyDefinitionAnswer;
