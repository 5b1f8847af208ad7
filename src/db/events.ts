/**
 * Audit events: every change writes one, in the same D1 batch as the change itself, so the
 * log never claims a change that did not happen (or misses one that did).
 */
import type { Db } from './client';
import { events } from './schema';

export interface Actor {
  /** Token name, or a user's email/username. */
  actorName: string;
  userId: number;
}

export interface AuditEvent {
  type: string;
  project?: string | null;
  environment?: string | null;
  featureName?: string | null;
  data?: unknown;
  preData?: unknown;
}

/** The insert statement for an audit event, to put in the caller's batch. */
export function auditEvent(db: Db, actor: Actor, event: AuditEvent) {
  return db.insert(events).values({
    type: event.type,
    createdBy: actor.actorName,
    createdByUserId: actor.userId,
    project: event.project ?? null,
    environment: event.environment ?? null,
    featureName: event.featureName ?? null,
    data: event.data ?? null,
    preData: event.preData ?? null,
  });
}
