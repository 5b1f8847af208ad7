import * as v from 'valibot';
import { integerId } from '../../http/validation';

/** Unleash's login event (loginEventSchema): snake_case names, as the UI and the CSV read them. */
const LoginEvent = v.object({
  id: v.number(),
  username: v.string(),
  auth_type: v.string(),
  created_at: v.string(),
  successful: v.boolean(),
  ip: v.nullable(v.string()),
  failure_reason: v.nullable(v.string()),
});

/** What `GET /api/admin/logins` answers (Unleash's loginHistorySchema). */
export const LoginHistoryResponse = v.object({ events: v.array(LoginEvent) });

export const LoginEventParams = v.object({ id: integerId });
