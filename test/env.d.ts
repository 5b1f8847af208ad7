import type { D1Migration } from '@cloudflare/vitest-plugin';
import type { Env as WorkerEnv } from '../src/env';

declare global {
  namespace Cloudflare {
    // Merged with the generated `Cloudflare.Env` (src/worker-configuration.d.ts), whose queue
    // binding is untyped: restate the Worker's typed one so tests send what the Worker reads.
    interface Env extends WorkerEnv {
      IMPORT_QUEUE: WorkerEnv['IMPORT_QUEUE'];
      INTEGRATIONS_QUEUE: WorkerEnv['INTEGRATIONS_QUEUE'];
      TEST_MIGRATIONS: D1Migration[];
      /** The integrations' local receiver (test/support/receiver.ts). */
      RECEIVER: Fetcher;
    }
  }
}
