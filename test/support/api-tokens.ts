/** What the API-token tests (test/api-tokens.test.ts, test/api-tokens-import.test.ts, test/api-tokens-v2.test.ts) hold answers to. */
import { count } from './db';

/** The keys of a created (or imported) token's answer, in 6.10.1's order. */
export const CREATED_TOKEN_KEYS = [
  'secret',
  'tokenName',
  'username',
  'type',
  'environment',
  'project',
  'projects',
  'expiresAt',
  'createdAt',
  'seenAt',
  'alias',
];

/** The keys of the `api-token-created` event's data, in 6.10.1's order (no secret). */
export const TOKEN_EVENT_DATA_KEYS = ['tokenName', 'environment', 'projects', 'type', 'username', 'alias', 'project', 'createdAt'];

/** What a refused token write must leave untouched: the tokens, their project links and the audit log. */
export async function tokenFootprint() {
  return {
    tokens: await count('SELECT count(*) AS n FROM api_tokens'),
    links: await count('SELECT count(*) AS n FROM api_token_project'),
    events: await count('SELECT count(*) AS n FROM events'),
  };
}
