import * as v from 'valibot';

const FrontendTogglesAnswer = v.object({
  toggles: v.array(
    v.object({
      name: v.nullable(v.string()),
      enabled: v.boolean(),
      variant: v.object({
        name: v.nullable(v.string()),
        enabled: v.boolean(),
        feature_enabled: v.boolean(),
        featureEnabled: v.boolean(),
        payload: v.optional(
          v.object({
            type: v.string(),
            value: v.optional(v.string()),
          }),
        ),
      }),
      impressionData: v.boolean(),
    }),
  ),
});

/** What `GET /api/frontend` answers with status 200. */
export const GetFrontendFeaturesResponse = FrontendTogglesAnswer;

/** What `POST /api/frontend` answers with status 200. */
export const GetFrontendApiFeaturesWithPostResponse = FrontendTogglesAnswer;

/**
 * The frontend API's query: the evaluation context (its fields, and `properties[name]` for
 * custom properties). Documented here; the handler reads it itself (context.ts), first value
 * of a repeated parameter.
 */
export const FrontendQuery = v.objectWithRest(
  {
    appName: v.optional(v.string()),
    environment: v.optional(v.string()),
    userId: v.optional(v.string()),
    sessionId: v.optional(v.string()),
    remoteAddress: v.optional(v.string()),
    currentTime: v.optional(v.string()),
  },
  v.string(),
);
