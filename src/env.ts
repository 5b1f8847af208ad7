import type { ImportChunkMessage } from './modules/import-export/queue-message';

/** Bindings and variables of the Worker (see wrangler.toml). */
export interface Env {
  DB: D1Database;
  /** API-key lookup: `apikey:<sha256 hex of the secret>` -> the token's principal. */
  TOKENS: KVNamespace;
  IMPORT_QUEUE: Queue<ImportChunkMessage>;
  /** Comma-separated secrets accepted as admin tokens, as Unleash reads INIT_ADMIN_API_TOKENS. */
  INIT_ADMIN_API_TOKENS?: string;
  /** Public base URL of this service, used in invite links. */
  UNLEASH_URL?: string;
  /** How often (ms) an isolate checks the data revision for SDK responses; default 1000. */
  SDK_REVISION_CHECK_MS?: string;
  /** Comma-separated origins allowed to call the frontend API (`*` by default), as Unleash's UNLEASH_FRONTEND_API_ORIGINS. */
  FRONTEND_API_ORIGINS?: string;
  /** How long a sign-in session lasts, in hours; default 48 (Unleash's). */
  SESSION_TTL_HOURS?: string;
}
