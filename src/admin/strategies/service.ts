/** The rules of strategy definitions: how one is shown, and which may change. */
import { runBatch, type Db } from '../../db/client';
import { auditEvent, type Actor } from '../../db/events';
import { badRequest, conflict, notFound } from '../../http/errors';
import type { StrategyInput } from './schema';
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

async function requireStrategy(db: Db, name: string, message = 'No strategy found') {
  const row = await store.findStrategy(db, name);
  if (!row) throw notFound(message);
  return row;
}

/** Built-in definitions are Unleash's own: they can be deprecated, never edited or deleted. */
function requireEditable(row: store.StrategyRow) {
  if (row.builtIn) throw badRequest(`Cannot edit strategy ${row.name}`);
}

/** What Unleash records for a created or updated definition: the fields sent, with its flags. */
function eventData(name: string, body: StrategyInput) {
  return {
    name,
    ...(body.title !== undefined && { title: body.title }),
    ...(body.description !== undefined && { description: body.description }),
    parameters: body.parameters,
    editable: body.editable ?? true,
    deprecated: false,
  };
}

function values(name: string, body: StrategyInput): store.StrategyValues {
  return { name, title: body.title ?? null, description: body.description ?? null, parameters: body.parameters };
}

export async function createStrategy(db: Db, actor: Actor, body: StrategyInput & { name: string }) {
  if (await store.findStrategy(db, body.name)) throw conflict(`Strategy with name ${body.name} already exist!`);
  await runBatch(db, [
    store.insertStrategy(db, values(body.name, body)),
    auditEvent(db, actor, { type: 'strategy-created', data: eventData(body.name, body) }),
  ]);
  return getStrategy(db, body.name);
}

/** Replaces a custom definition's title, description and parameters; the path names it. */
export async function updateStrategy(db: Db, actor: Actor, name: string, body: StrategyInput) {
  requireEditable(await requireStrategy(db, name));
  await runBatch(db, [
    store.updateStrategy(db, values(name, body)),
    auditEvent(db, actor, { type: 'strategy-updated', data: { ...eventData(name, body), name } }),
  ]);
}

export async function deleteStrategy(db: Db, actor: Actor, name: string) {
  requireEditable(await requireStrategy(db, name));
  await runBatch(db, [store.deleteStrategy(db, name), auditEvent(db, actor, { type: 'strategy-deleted', data: { name } })]);
}

/** Deprecating hides a definition from new strategies in the UI; built-ins may be deprecated too. */
export async function deprecateStrategy(db: Db, actor: Actor, name: string) {
  await requireStrategy(db, name, `Could not find strategy with name ${name}`);
  await runBatch(db, [store.setDeprecated(db, name, true), auditEvent(db, actor, { type: 'strategy-deprecated', data: { name } })]);
}

export async function reactivateStrategy(db: Db, actor: Actor, name: string) {
  await requireStrategy(db, name);
  await runBatch(db, [store.setDeprecated(db, name, false), auditEvent(db, actor, { type: 'strategy-reactivated', data: { name } })]);
}
