import * as v from 'valibot';

/** Maintenance mode, as set and as answered. */
export const MaintenanceSchema = v.object({ enabled: v.boolean() });
export type Maintenance = v.InferOutput<typeof MaintenanceSchema>;
