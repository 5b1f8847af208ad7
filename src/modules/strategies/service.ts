/** The rules of strategy definitions: how one is shown, and which may change. */
import type { Db } from '../../db/client';
import { notFound } from '../../http/errors';
import * as store from './store';

export function strategyShape(row: store.StrategyRow) {
  return {
    displayName: row.displayName,
    name: row.name,
    editable: !row.builtIn,
    description: row.description,
    parameters: row.parameters,
    deprecated: row.deprecated,
    title: row.title,
  };
}

export async function listStrategies(db: Db) {
  return { version: 1, strategies: (await store.listStrategies(db)).map(strategyShape) };
}

export async function getStrategy(db: Db, name: string) {
  const row = await store.findStrategy(db, name);
  if (!row) throw notFound('No strategy found');
  return strategyShape(row);
}
