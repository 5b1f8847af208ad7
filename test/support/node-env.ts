/**
 * Node-side tests share test/tsconfig.json with the workers tests, whose types have no
 * `process`: read it through globalThis instead of pulling in @types/node for everyone.
 */
const nodeProcess = (globalThis as unknown as { process?: { env: Record<string, string | undefined> } }).process;

/** The port a node test's `wrangler dev` listens on: TEST_WORKER_PORT, so checkouts do not clash. */
export function testWorkerPort(fallback: number): number {
  return Number(nodeProcess?.env.TEST_WORKER_PORT ?? fallback);
}
