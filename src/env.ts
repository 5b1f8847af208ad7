import type { DeliveryMessage } from './integrations/addons/queue-message';
import type { UsageMessage } from './sdk/client-api/usage-message';
import type { ImportChunkMessage } from './admin/import-export/queue-message';

/**
 * Bindings and variables of the Worker. The bindings and `[vars]` of wrangler.toml come from
 * `GeneratedEnv` in src/worker-configuration.d.ts, which `npm run cf-typegen` (`wrangler types`)
 * writes and `npm run check:types-generated` compares with what wrangler would generate: change
 * wrangler.toml, not that file. Declared here is only what wrangler.toml cannot say: variables
 * and secrets that may be unset (`wrangler secret put`, `.dev.vars`), and the queues' message types.
 */
export interface Env extends GeneratedEnv {
  IMPORT_QUEUE: Queue<ImportChunkMessage>;
  INTEGRATIONS_QUEUE: Queue<DeliveryMessage>;
  METRICS_QUEUE: Queue<UsageMessage>;
  /** Base delay (seconds) of a failed metrics flush's retries, doubled per try; default 5. */
  METRICS_RETRY_DELAY_SECONDS?: string;
  /** Base delay (seconds) of an integration's retries, doubled per try; default 10. */
  INTEGRATIONS_RETRY_DELAY_SECONDS?: string;
  /** `true`: integrations may call loopback and private addresses (local development only). */
  INTEGRATIONS_ALLOW_PRIVATE_TARGETS?: string;
  /** Comma-separated secrets accepted as admin tokens, as Unleash reads INIT_ADMIN_API_TOKENS. */
  INIT_ADMIN_API_TOKENS?: string;
  /** Public base URL of this service, used in invite links. */
  UNLEASH_URL?: string;
  /** How often (ms) an isolate checks the data revision for SDK responses; default 1000. */
  SDK_REVISION_CHECK_MS?: string;
  /** How often (ms) an isolate listening to the change feed still checks the data revision (the fallback for a lost push); default 1000, as without the feed (bench/propagation/RESULTS.md says why). */
  SDK_PUSH_FALLBACK_MS?: string;
  /** Comma-separated origins allowed to call the frontend API (`*` by default), as Unleash's UNLEASH_FRONTEND_API_ORIGINS. */
  FRONTEND_API_ORIGINS?: string;
  /** How long a sign-in session lasts, in hours; default 48 (Unleash's). */
  SESSION_TTL_HOURS?: string;
  /** Cloudflare Access team domain (`https://<team>.cloudflareaccess.com`); with ACCESS_AUD, Access signs people in. */
  ACCESS_TEAM_DOMAIN?: string;
  /** The Access application's audience (AUD) tag. */
  ACCESS_AUD?: string;
  /** OpenID Connect client secret (`wrangler secret put OIDC_CLIENT_SECRET`); wins over one saved in the settings. */
  OIDC_CLIENT_SECRET?: string;
}
