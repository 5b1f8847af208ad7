/**
 * Reads that follow an SDK write. Metrics and registrations may reach the tables after the
 * post is answered (ingestion off the request path), so a test that posts through the SDK
 * endpoints reads back with `eventually`: it retries until the check passes, for up to
 * `timeoutMs`, then fails with the check's last error.
 */
export async function eventually<T>(check: () => Promise<T>, { timeoutMs = 10_000, intervalMs = 100 } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}
