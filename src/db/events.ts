/**
 * Audit events: every change writes one, in the same D1 batch as the change itself, so the
 * log never claims a change that did not happen (or misses one that did).
 */
import { sql, type SQL } from 'drizzle-orm';
import { chunkedInsert } from './chunk';
import { d1Statement, type Db } from './client';
import { SYSTEM_USER_ID } from '../auth/principal';
import { clientApplications, events } from './schema';

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

/**
 * The audit event as an `INSERT … SELECT … WHERE condition` (run it with `d1Statement`): for
 * writes that re-check in SQL what the handler checked before (a concurrent request may have
 * changed it since), so that no event is recorded for a write that wrote nothing.
 */
export function auditEventWhere(actor: Actor, event: AuditEvent, condition: SQL): SQL {
  const json = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(value));
  return sql`INSERT INTO ${events} (type, created_by, created_by_user_id, project, environment, feature_name, data, pre_data)
    SELECT ${event.type}, ${actor.actorName}, ${actor.userId}, ${event.project ?? null}, ${event.environment ?? null}, ${event.featureName ?? null}, ${json(event.data)}, ${json(event.preData)}
    WHERE ${condition}`;
}

/** Several audit events as multi-row inserts that fit D1's parameter bound (none for none). */
export function auditEvents(db: Db, actor: Actor, list: readonly AuditEvent[]) {
  return chunkedInsert(list, 8, (run) =>
    db.insert(events).values(
      run.map((event) => ({
        type: event.type,
        createdBy: actor.actorName,
        createdByUserId: actor.userId,
        project: event.project ?? null,
        environment: event.environment ?? null,
        featureName: event.featureName ?? null,
        data: event.data ?? null,
        preData: event.preData ?? null,
      })),
    ),
  );
}

/**
 * The audit event of a row written earlier in the same batch, its `data` built in SQL by
 * `dataJson` (e.g. from the row `last_insert_rowid()` names, or the `changes()` a delete
 * made): for writes whose event must carry what only the database knows. With `condition`,
 * written only when it holds (e.g. `changes() > 0`).
 */
export function auditEventFromSql(actor: Actor, type: string, dataJson: SQL, condition: SQL = sql`1`): SQL {
  return sql`INSERT INTO ${events} (type, created_by, created_by_user_id, project, environment, feature_name, data, pre_data)
    SELECT ${type}, ${actor.actorName}, ${actor.userId}, NULL, NULL, NULL, ${dataJson}, NULL WHERE ${condition}`;
}

// ---------------------------------------------------------------------------------------
// Events the system writes: shared by the admin API and the SDK ingestion path

/** Who Unleash says announced a new application (its system user). */
export const SYSTEM_ACTOR: Actor = { actorName: 'unleash_system_user', userId: SYSTEM_USER_ID };

/** What an `application-created` event carries: the new row, in Unleash's key order. */
export interface AnnouncedApplication {
  appName: string;
  createdAt: string;
  updatedAt: string;
  description: string | null;
  strategies: string[];
  createdBy: string | null;
  url: string | null;
  color: string | null;
  icon: string | null;
}

/**
 * The `application-created` event of `data.appName`, written only if no row of it exists yet: put it
 * in the same batch before the statement that creates the row.
 */
export function announceApplicationIfNew(db: Db, data: AnnouncedApplication): D1PreparedStatement {
  return d1Statement(
    db,
    auditEventWhere(
      SYSTEM_ACTOR,
      { type: 'application-created', data },
      sql`NOT EXISTS (SELECT 1 FROM ${clientApplications} WHERE ${clientApplications.appName} = ${data.appName})`,
    ),
  );
}
