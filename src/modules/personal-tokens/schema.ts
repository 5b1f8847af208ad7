import * as v from 'valibot';
import { dateTime, integerId, text } from '../../http/validation';

/** Unleash's createPatSchema: both fields required. */
export const CreatePersonalTokenSchema = v.object({
  description: text(255),
  expiresAt: dateTime,
});
export type CreatePersonalTokenRequest = v.InferOutput<typeof CreatePersonalTokenSchema>;

export const PersonalTokenIdParams = v.object({ id: integerId });
