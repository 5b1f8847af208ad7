import * as v from 'valibot';
import { text } from '../../http/validation';

const Projects = v.union([v.array(text(100)), v.literal('*')], 'must be array of strings or "*"');

/** The Unleash context as the SDKs model it: `appName` is required, other fields are kept. */
// Values may be long comma-separated lists (the advanced playground); the body limit bounds them.
const Value = text(1_000_000);
const SdkContextSchema = v.looseObject({
  appName: v.pipe(Value, v.minLength(1, 'must NOT have fewer than 1 characters')),
  currentTime: v.optional(Value),
  environment: v.optional(Value),
  properties: v.optional(v.record(v.string(), Value)),
  remoteAddress: v.optional(Value),
  sessionId: v.optional(Value),
  userId: v.optional(Value),
});

/** `POST /api/admin/playground`: one environment. */
export const PlaygroundRequestSchema = v.object({
  environment: text(100),
  projects: v.optional(Projects),
  context: SdkContextSchema,
});

/** `POST /api/admin/playground/advanced`: several environments, comma-separated context values. */
export const AdvancedPlaygroundRequestSchema = v.object({
  environments: v.pipe(
    v.array(v.pipe(text(100), v.regex(/^[a-zA-Z0-9~_.-]+$/, 'must match pattern "^[a-zA-Z0-9~_.-]+$"'))),
    v.minLength(1, 'must NOT have fewer than 1 items'),
    v.maxLength(50, 'must NOT have more than 50 items'),
  ),
  projects: v.optional(Projects),
  context: SdkContextSchema,
});

const Verdict = v.union([v.boolean(), v.literal('unknown')]);
const Payload = v.object({ type: v.string(), value: v.string() });
const ConstraintResult = v.looseObject({ contextName: v.string(), operator: v.string(), result: v.boolean() });

const StrategyResult = v.object({
  name: v.string(),
  id: v.string(),
  title: v.optional(v.string()),
  disabled: v.boolean(),
  parameters: v.record(v.string(), v.string()),
  result: v.object({
    enabled: Verdict,
    evaluationStatus: v.picklist(['complete', 'incomplete', 'unevaluated']),
    variant: v.optional(v.object({ name: v.string(), enabled: v.boolean(), payload: v.optional(Payload) })),
    variants: v.optional(v.array(v.looseObject({ name: v.string(), weight: v.number() }))),
  }),
  constraints: v.array(ConstraintResult),
  segments: v.array(v.object({ name: v.string(), id: v.number(), result: v.boolean(), constraints: v.array(ConstraintResult) })),
  links: v.object({ edit: v.string() }),
});

const FeatureResultFields = {
  isEnabled: v.boolean(),
  isEnabledInCurrentEnvironment: v.boolean(),
  hasUnsatisfiedDependency: v.boolean(),
  variant: v.object({
    name: v.string(),
    enabled: v.boolean(),
    payload: v.optional(Payload),
    feature_enabled: v.boolean(),
    featureEnabled: v.optional(v.boolean()),
  }),
  variants: v.array(v.looseObject({ name: v.string(), weight: v.number() })),
  name: v.string(),
  projectId: v.string(),
  strategies: v.object({ result: Verdict, data: v.array(StrategyResult) }),
};

/** What `POST /api/admin/playground` answers with status 200. */
export const PlaygroundResponse = v.object({
  input: v.looseObject({}),
  features: v.array(v.object(FeatureResultFields)),
});

/** What `POST /api/admin/playground/advanced` answers with status 200. */
export const AdvancedPlaygroundResponse = v.object({
  features: v.array(
    v.object({
      name: v.string(),
      projectId: v.string(),
      environments: v.record(
        v.string(),
        v.array(v.object({ ...FeatureResultFields, context: v.looseObject({}), environment: v.string() })),
      ),
    }),
  ),
  input: v.looseObject({}),
  warnings: v.optional(v.object({ invalidContextProperties: v.array(v.string()) })),
});
