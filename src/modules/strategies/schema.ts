import * as v from 'valibot';

const StrategyAnswer = v.object({
  displayName: v.string(),
  name: v.nullable(v.string()),
  editable: v.boolean(),
  description: v.nullable(v.string()),
  parameters: v.array(
    v.object({
      name: v.nullable(v.string()),
      type: v.string(),
      description: v.nullable(v.string()),
      required: v.boolean(),
    }),
  ),
  deprecated: v.boolean(),
  title: v.null(),
});

/** What `GET /api/admin/strategies` answers with status 200. */
export const GetAllStrategiesResponse = v.object({
  version: v.number(),
  strategies: v.array(StrategyAnswer),
});

/** What `GET /api/admin/strategies/:name` answers with status 200. */
export const GetStrategyResponse = StrategyAnswer;
