// The SDK benchmark and the SDK integration test start the Worker the same way: through
// the shared bench plumbing (wrangler dev on loopback, fresh local state).
export { startWorker, BENCH_ADMIN_TOKEN } from '../lib.mjs';
