import type { D1Migration } from '@cloudflare/vitest-plugin';
import type { Env as WorkerEnv } from '../src/env';

declare global {
  namespace Cloudflare {
    // Merged with the generated `Cloudflare.Env` (src/worker-configuration.d.ts), whose queue
    // binding is untyped: restate the Worker's typed one so tests send what the Worker reads.
    interface Env extends WorkerEnv {
      IMPORT_QUEUE: WorkerEnv['IMPORT_QUEUE'];
      // Optional in the generated type (Edge mode's environment has none of them); the service's tests have them.
      DB: WorkerEnv['DB'];
      TOKENS: WorkerEnv['TOKENS'];
      CHANGE_REQUEST_SCHEDULER: WorkerEnv['CHANGE_REQUEST_SCHEDULER'];
      METRICS_QUEUE: WorkerEnv['METRICS_QUEUE'];
      RL_EDGE_VALIDATE_KEY: WorkerEnv['RL_EDGE_VALIDATE_KEY'];
      RL_INVITE_CLIENT: WorkerEnv['RL_INVITE_CLIENT'];
      RL_FRONTEND_CLIENT: WorkerEnv['RL_FRONTEND_CLIENT'];
      RL_FRONTEND_KEY: WorkerEnv['RL_FRONTEND_KEY'];
      RL_LOGIN_CLIENT: WorkerEnv['RL_LOGIN_CLIENT'];
      RL_PASSWORD_CLIENT: WorkerEnv['RL_PASSWORD_CLIENT'];
      RL_UI_ERROR_CLIENT: WorkerEnv['RL_UI_ERROR_CLIENT'];
      RL_BACKSTAGE_CLIENT: WorkerEnv['RL_BACKSTAGE_CLIENT'];
      RL_SSO_CLIENT: WorkerEnv['RL_SSO_CLIENT'];
      RL_SCIM_CLIENT: WorkerEnv['RL_SCIM_CLIENT'];
      RL_SCIM_KEY: WorkerEnv['RL_SCIM_KEY'];
      INTEGRATIONS_QUEUE: WorkerEnv['INTEGRATIONS_QUEUE'];
      TEST_MIGRATIONS: D1Migration[];
      /** The integrations' local receiver (test/support/receiver.ts). */
      RECEIVER: Fetcher;
    }
  }
}
