/**
 * SDK metrics reach D1 through the metrics Queue (src/sdk/client-api/usage-queue.ts), not
 * on the request path: after posting metrics, a test waits for them before reading D1 or the
 * API. The consumer runs in the test's own isolate, which knows what it queued.
 */
import { usageInFlight } from '../../src/sdk/client-api/usage-inflight';

/** Waits until every metrics message queued so far has been counted (or dead-lettered). */
export async function settleMetrics(timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (usageInFlight() > 0) {
    if (Date.now() > deadline) throw new Error(`${usageInFlight()} metrics messages still queued after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
