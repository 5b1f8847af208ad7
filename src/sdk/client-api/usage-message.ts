/**
 * One Queue message per SDK metrics post (or per part of a large one): what the post may
 * write, validated and scoped to the key on the request path, merged with the other messages
 * of its batch by the consumer (usage-queue.ts) before D1 sees it.
 */
import type { ImpactMetric } from '../impact-metrics/parse';

export interface UsageMessage {
  /** Made when the post is received: the consumer counts each message once, whatever the Queue redelivers. */
  id: string;
  /** The key's environment: every count and instance below belongs to it. */
  environment: string;
  /** When the post was received (ISO): last seen, lifecycle and instance times. */
  receivedAt: string;
  /** A frontend key's post: public by design, so what it may write is bounded (the consumer checks). */
  frontend?: { tokenId: string; projects: string[] };
  /** Per flag, app and hour: `[featureName, appName, hourIso, yes, no, variants]`. */
  counts: UsageCount[];
  /** The instances that reported (an SDK, or the apps an Edge forwards). */
  instances: UsageInstance[];
  /** Apps to mark seen (an Edge reporting itself creates its app). */
  seenApps?: string[];
  /** Impact metrics (Unleash 8), checked and bounded on the request path (impact-metrics/parse.ts). */
  impact?: ImpactMetric[];
}

export type UsageCount = [featureName: string, appName: string, hour: string, yes: number, no: number, variants: Record<string, number>];

export interface UsageInstance {
  appName: string;
  instanceId: string;
  sdkVersion: string | null;
  clientIp: string | null;
}
