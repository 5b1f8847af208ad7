/** Feature flag types as Unleash shows them. */
import type { Db } from '../../db/client';
import * as store from './store';

export function featureTypeShape(row: store.FeatureTypeRow) {
  return { id: row.id, name: row.name, description: row.description, lifetimeDays: row.lifetimeDays };
}

export async function listFeatureTypes(db: Db) {
  return { version: 1, types: (await store.listFeatureTypes(db)).map(featureTypeShape) };
}
