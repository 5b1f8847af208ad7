/** The Drizzle queries of integrations, their deliveries and their delivery log. */
import { and, desc, eq, inArray, isNull, lt, ne, notInArray, sql } from 'drizzle-orm';
import { d1Statement, runD1Batch, type Db } from '../../db/client';
import { auditEventFromSql, auditEventWhere, SYSTEM_ACTOR, type Actor, type AuditEvent } from '../../db/events';
import { addonDeliveries, addons, events, featureTag, integrationEvents, tagTypes } from '../../db/schema';

export type AddonRow = typeof addons.$inferSelect;
export type NewAddon = Omit<typeof addons.$inferInsert, 'id' | 'createdAt'>;
export type DeliveryRow = typeof addonDeliveries.$inferSelect;
export type EventRow = typeof events.$inferSelect;

export async function listAddons(db: Db): Promise<AddonRow[]> {
  return db.select().from(addons).orderBy(addons.id);
}

export async function findAddon(db: Db, id: number): Promise<AddonRow | undefined> {
  const [row] = await db.select().from(addons).where(eq(addons.id, id)).limit(1);
  return row;
}

/**
 * Unleash's event data of the integration just inserted: everything but its parameters (they
 * hold secrets). The newest row: ids only grow (AUTOINCREMENT) and a batch is one transaction.
 */
const eventDataOfNewest = sql`(SELECT json_object('id', a.id, 'provider', a.provider, 'enabled', json(CASE a.enabled WHEN 1 THEN 'true' ELSE 'false' END),
  'description', a.description, 'events', json(a.events), 'projects', json(a.projects), 'environments', json(a.environments))
  FROM ${addons} a WHERE a.id = (SELECT max(id) FROM ${addons}))`;

/** Unleash creates tag types on behalf of the system user. */

export interface ProviderTagType {
  name: string;
  description: string;
  icon: string;
}

/**
 * Inserts the integration, the tag types of its provider that do not exist yet (each with its
 * `tag-type-created` event) and its `addon-config-created` event, in one batch; returns the row.
 */
export async function insertAddon(
  db: Db,
  actor: Actor,
  addon: NewAddon,
  providerTagTypes: readonly ProviderTagType[] = [],
): Promise<AddonRow> {
  const insert = db.insert(addons).values(addon).returning();
  const tagTypeStatements = providerTagTypes.flatMap((tagType) => [
    d1Statement(
      db,
      db.insert(tagTypes).values({ name: tagType.name, description: tagType.description, icon: tagType.icon }).onConflictDoNothing(),
    ),
    d1Statement(db, auditEventWhere(SYSTEM_ACTOR, { type: 'tag-type-created', data: tagType }, sql`changes() > 0`)),
  ]);
  const [inserted] = await runD1Batch(db, [
    d1Statement(db, insert),
    ...tagTypeStatements,
    d1Statement(db, auditEventFromSql(actor, 'addon-config-created', eventDataOfNewest)),
  ]);
  const raw = inserted!.results[0] as Record<string, unknown>;
  const row = await findAddon(db, Number(raw.id));
  return row!;
}

/** Replaces the integration and writes its event, only if it still exists; false if it did not. */
export async function updateAddon(db: Db, actor: Actor, id: number, addon: NewAddon, event: AuditEvent): Promise<boolean> {
  const [updated] = await runD1Batch(db, [
    d1Statement(db, db.update(addons).set(addon).where(eq(addons.id, id))),
    d1Statement(db, auditEventWhere(actor, event, sql`changes() > 0`)),
  ]);
  return (updated?.meta.changes ?? 0) > 0;
}

/** Deletes the integration (its deliveries and log go with it) and writes its event. */
export async function deleteAddon(db: Db, actor: Actor, id: number, event: AuditEvent): Promise<boolean> {
  const [deleted] = await runD1Batch(db, [
    d1Statement(db, db.delete(addons).where(eq(addons.id, id))),
    d1Statement(db, auditEventWhere(actor, event, sql`changes() > 0`)),
  ]);
  return (deleted?.meta.changes ?? 0) > 0;
}

export type IntegrationEventRow = typeof integrationEvents.$inferSelect;

/** The delivery log of an integration, newest first. */
export async function integrationEventsOf(db: Db, integrationId: number, limit: number, offset: number): Promise<IntegrationEventRow[]> {
  return db
    .select()
    .from(integrationEvents)
    .where(eq(integrationEvents.integrationId, integrationId))
    .orderBy(desc(integrationEvents.id))
    .limit(limit)
    .offset(offset);
}

// ---------------------------------------------------------------------------------------
// Deliveries

/** Deliveries not yet handed to the Queue, oldest first. */
export async function unqueuedDeliveries(db: Db, limit: number): Promise<{ id: number }[]> {
  return db
    .select({ id: addonDeliveries.id })
    .from(addonDeliveries)
    .where(isNull(addonDeliveries.queuedAt))
    .orderBy(addonDeliveries.id)
    .limit(limit);
}

export async function markQueued(db: Db, ids: readonly number[], at: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .update(addonDeliveries)
    .set({ queuedAt: at })
    .where(and(inArray(addonDeliveries.id, [...ids]), isNull(addonDeliveries.queuedAt)));
}

export async function findDelivery(db: Db, id: number): Promise<DeliveryRow | undefined> {
  const [row] = await db.select().from(addonDeliveries).where(eq(addonDeliveries.id, id)).limit(1);
  return row;
}

export async function findEvent(db: Db, id: number): Promise<EventRow | undefined> {
  const [row] = await db.select().from(events).where(eq(events.id, id)).limit(1);
  return row;
}

export async function tagsOfFeature(db: Db, featureName: string): Promise<{ value: string; type: string }[]> {
  return db
    .select({ value: featureTag.tagValue, type: featureTag.tagType })
    .from(featureTag)
    .where(eq(featureTag.featureName, featureName))
    .orderBy(featureTag.createdAt);
}

/** Whether an earlier event of the same flag is still to be delivered to this integration. */
export async function earlierUndelivered(db: Db, delivery: DeliveryRow): Promise<boolean> {
  if (delivery.featureName === null) return false;
  const [row] = await db
    .select({ id: addonDeliveries.id })
    .from(addonDeliveries)
    .where(
      and(
        eq(addonDeliveries.addonId, delivery.addonId),
        eq(addonDeliveries.featureName, delivery.featureName),
        lt(addonDeliveries.id, delivery.id),
        notInArray(addonDeliveries.status, ['sent', 'failed']),
      ),
    )
    .limit(1);
  return row !== undefined;
}

/**
 * Claims the delivery for one send: only a pending one, or one whose earlier claim expired
 * (its sender died). Returns the attempt number, or null when it is sent, failed or being sent.
 */
export async function claimDelivery(db: Db, id: number, now: string, leaseUntil: string): Promise<number | null> {
  const [row] = await db
    .update(addonDeliveries)
    .set({ status: 'sending', leaseUntil, attempts: sql`${addonDeliveries.attempts} + 1` })
    .where(
      and(
        eq(addonDeliveries.id, id),
        sql`(${addonDeliveries.status} = 'pending' OR (${addonDeliveries.status} = 'sending' AND ${addonDeliveries.leaseUntil} < ${now}))`,
      ),
    )
    .returning({ attempts: addonDeliveries.attempts });
  return row?.attempts ?? null;
}

/**
 * What each target of the delivery answered so far (only while this consumer holds the claim),
 * and a renewed lease: a delivery to many slow targets keeps its claim while it makes progress.
 */
export async function recordTargets(db: Db, id: number, targets: NonNullable<DeliveryRow['targets']>, leaseUntil: string): Promise<void> {
  await db
    .update(addonDeliveries)
    .set({ targets, leaseUntil })
    .where(and(eq(addonDeliveries.id, id), eq(addonDeliveries.status, 'sending')));
}

/** Gives the claim back after a failed try that will be retried. */
export async function releaseDelivery(db: Db, id: number, error: string): Promise<void> {
  await db
    .update(addonDeliveries)
    .set({ status: 'pending', leaseUntil: null, lastError: error })
    .where(and(eq(addonDeliveries.id, id), eq(addonDeliveries.status, 'sending')));
}

export interface LogEntry {
  state: 'success' | 'failed' | 'successWithErrors';
  stateDetails: string;
  event: unknown;
  details: Record<string, unknown>;
}

/**
 * Ends the delivery (`sent` or `failed`) and records it in the integration's log, in one
 * batch, unless it already ended: false then (nothing written).
 */
export async function finishDelivery(
  db: Db,
  delivery: DeliveryRow,
  status: 'sent' | 'failed',
  entry: LogEntry,
  error?: string,
): Promise<boolean> {
  const [updated] = await runD1Batch(db, [
    d1Statement(
      db,
      db
        .update(addonDeliveries)
        .set({ status, leaseUntil: null, lastError: error ?? null })
        .where(and(eq(addonDeliveries.id, delivery.id), ne(addonDeliveries.status, 'sent'), ne(addonDeliveries.status, 'failed'))),
    ),
    d1Statement(
      db,
      sql`INSERT INTO ${integrationEvents} (integration_id, state, state_details, event, details)
        SELECT ${delivery.addonId}, ${entry.state}, ${entry.stateDetails}, ${JSON.stringify(entry.event)}, ${JSON.stringify(entry.details)}
        WHERE changes() > 0 AND EXISTS (SELECT 1 FROM ${addons} WHERE id = ${delivery.addonId})`,
    ),
  ]);
  return (updated?.meta.changes ?? 0) > 0;
}
