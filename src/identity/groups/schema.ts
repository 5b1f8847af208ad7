import * as v from 'valibot';
import { text } from '../../http/validation';
import { UserAnswer } from '../users/schema';

const id = v.pipe(v.number(), v.integer('must be integer'), v.minValue(0, 'must be >= 0'), v.maxValue(2147483647, 'must be <= 2147483647'));

/**
 * Unleash Enterprise's createGroupSchema (the UI sends it to create and to update): the name's
 * emptiness is checked by the service, with Unleash's message. Unknown keys are dropped.
 */
export const GroupInputSchema = v.object({
  name: v.optional(text(255), ''),
  description: v.optional(v.nullable(text(1000))),
  mappingsSSO: v.optional(v.pipe(v.array(v.pipe(text(255), v.trim())), v.maxLength(100, 'must have at most 100 items')), []),
  rootRole: v.optional(v.nullable(id)),
  users: v.optional(v.pipe(v.array(v.object({ user: v.object({ id }) })), v.maxLength(1000, 'must have at most 1000 items')), []),
});
export type GroupInput = v.InferOutput<typeof GroupInputSchema>;

const GroupUserAnswer = v.object({ joinedAt: v.string(), createdBy: v.nullable(v.string()), user: UserAnswer });

/** Unleash's groupSchema. */
export const GroupAnswer = v.object({
  id: v.number(),
  name: v.string(),
  description: v.nullable(v.string()),
  mappingsSSO: v.array(v.string()),
  rootRole: v.nullable(v.number()),
  createdBy: v.nullable(v.string()),
  createdAt: v.nullable(v.string()),
  users: v.optional(v.array(GroupUserAnswer)),
  projects: v.optional(v.array(v.string())),
  userCount: v.optional(v.number()),
  scimId: v.nullable(v.string()),
});

/** Unleash's groupsSchema. */
export const GroupsAnswer = v.object({ groups: v.array(GroupAnswer) });
