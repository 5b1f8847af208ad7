/** Feature flag types as Unleash shows them. */
import { runBatch, type Db } from '../../db/client';
import { auditEvent, type Actor } from '../../db/events';
import { notFound } from '../../http/errors';
import * as store from './store';

function featureTypeShape(row: store.FeatureTypeRow) {
  return { id: row.id, name: row.name, description: row.description, lifetimeDays: row.lifetimeDays };
}

export async function listFeatureTypes(db: Db) {
  return { version: 1, types: (await store.listFeatureTypes(db)).map(featureTypeShape) };
}

/** Sets how many days a flag of this type lives before it is potentially stale (0 or null: never, stored as null as Unleash does). */
export async function setLifetime(db: Db, actor: Actor, id: string, lifetimeDays: number | null) {
  const before = await store.findFeatureType(db, id);
  if (!before) throw notFound(`The feature type you tried to update ("${id}") does not exist.`);
  const after = { ...before, lifetimeDays: lifetimeDays === 0 ? null : lifetimeDays };
  await runBatch(db, [
    store.setLifetime(db, id, after.lifetimeDays),
    auditEvent(db, actor, { type: 'feature-type-updated', data: featureTypeShape(after), preData: featureTypeShape(before) }),
  ]);
  return featureTypeShape(after);
}
