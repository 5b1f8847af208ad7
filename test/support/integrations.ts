/** Integrations in tests: the local receiver (test/support/receiver.ts) and the delivery log. */
import { env } from 'cloudflare:workers';
import type { Received } from './receiver';
import { bodyOf, call } from './http';

/** What `<host><path>` of the receiver got so far. */
export async function receivedAt(at: string): Promise<Received[]> {
  return (await env.RECEIVER.fetch(`http://receiver/requests?at=${encodeURIComponent(at)}`)).json();
}

/** The statuses `<host><path>` answers next (then 200). */
export async function scriptReceiver(at: string, statuses: number[]): Promise<void> {
  await env.RECEIVER.fetch('http://receiver/script', { method: 'POST', body: JSON.stringify({ at, statuses }) });
}

export interface LoggedDelivery {
  id: string;
  integrationId: number;
  createdAt: string;
  state: string;
  stateDetails: string;
  event: Record<string, any>;
  details: Record<string, any>;
}

export async function deliveryLog(addonId: number): Promise<LoggedDelivery[]> {
  return (await bodyOf<{ integrationEvents: LoggedDelivery[] }>(await call('GET', `/api/admin/addons/${addonId}/events`)))
    .integrationEvents;
}

/** Waits until the integration's log has `count` entries, and returns them (newest first). */
export async function waitForLog(addonId: number, count = 1, timeoutMs = 20_000): Promise<LoggedDelivery[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const log = await deliveryLog(addonId);
    if (log.length >= count) return log;
    if (Date.now() > deadline) throw new Error(`integration ${addonId} logged ${log.length} of ${count} deliveries`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
