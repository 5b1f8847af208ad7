import * as v from 'valibot';

/** What `GET /api/admin/metrics/unknown-flags` answers (Unleash 8's unknownFlagsResponseSchema). */
export const UnknownFlagsResponse = v.object({
  unknownFlags: v.array(
    v.object({
      name: v.string(),
      lastSeenAt: v.string(),
      lastEventAt: v.nullable(v.string()),
      reports: v.array(
        v.object({
          appName: v.string(),
          environments: v.array(v.object({ environment: v.string(), seenAt: v.string() })),
        }),
      ),
    }),
  ),
});
