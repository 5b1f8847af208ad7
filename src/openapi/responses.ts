/** Unleash's error body, which every error answer of every operation has. */
import * as v from 'valibot';

/** `details` lists every problem, each with a message (and, for validation, the path of the input). */
export const ErrorBodySchema = v.looseObject({
  id: v.pipe(v.string(), v.description('The id of this error instance')),
  name: v.pipe(v.string(), v.description('The kind of error, e.g. ValidationError, NotFoundError, NoAccessError')),
  message: v.string(),
  details: v.optional(v.array(v.looseObject({ message: v.string(), path: v.optional(v.string()) }))),
});

/** What Unleash answers to an admin-API write while maintenance mode is on: only the message. */
export const MaintenanceBodySchema = v.object({ message: v.string() });
