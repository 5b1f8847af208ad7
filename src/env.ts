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
  // wrangler types marks a binding optional when one environment lacks it: the service's
  // bindings are absent in `[env.edge]`, whose requests never reach the code that reads them
  // (src/edge/ answers them all), so the service's code keeps them required.
  DB: D1Database;
  TOKENS: KVNamespace;
  CHANGE_REQUEST_SCHEDULER: DurableObjectNamespace<import('./index').ChangeRequestScheduler>;
  RL_EDGE_VALIDATE_KEY: RateLimit;
  RL_INVITE_CLIENT: RateLimit;
  RL_FRONTEND_CLIENT: RateLimit;
  RL_FRONTEND_KEY: RateLimit;
  RL_LOGIN_CLIENT: RateLimit;
  RL_PASSWORD_CLIENT: RateLimit;
  RL_UI_ERROR_CLIENT: RateLimit;
  RL_BACKSTAGE_CLIENT: RateLimit;
  RL_SSO_CLIENT: RateLimit;
  RL_SCIM_CLIENT: RateLimit;
  RL_SCIM_KEY: RateLimit;
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
  /** How long (ms) the binding (src/binding/) counts usage before queueing it as one metrics post; default 60000. */
  BINDING_METRICS_INTERVAL_MS?: string;
  /** How long (ms) an isolate counts requests for the data-usage page before writing them to D1 (src/admin/traffic-usage/counter.ts); default 30000. */
  TRAFFIC_FLUSH_INTERVAL_MS?: string;
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
  /** Edge mode (docs/edge.md): the upstream Unleash's base URL; set, the Worker is an Edge. */
  EDGE_UPSTREAM_URL?: string;
  /** Edge mode: seconds between polls of each token scope upstream; default 15. */
  EDGE_SYNC_INTERVAL_SECONDS?: string;
  /** Edge mode: seconds between forwards of a scope's metrics upstream; default 60 (Unleash Edge's). */
  EDGE_METRICS_INTERVAL_SECONDS?: string;
  /** Edge mode: the shared secret the upstream's webhook sends (`wrangler secret put EDGE_WEBHOOK_SECRET`). */
  EDGE_WEBHOOK_SECRET?: string;
  /** Edge mode: comma-separated backend tokens to sync from the start (frontend tokens are served from their scopes). */
  EDGE_CLIENT_TOKENS?: string;
  /** Edge mode: how often (ms) an isolate asks the sync object whether its snapshot moved; default 1000. */
  EDGE_CHECK_MS?: string;
  /** Edge mode: hours a token confirmed upstream is still served, after a restart, while the upstream cannot be asked; default 168. */
  EDGE_OFFLINE_TOKEN_HOURS?: string;
}
