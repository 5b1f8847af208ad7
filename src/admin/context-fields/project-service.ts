/**
 * A project's context fields (Unleash 8): fields only that project's constraints offer. They
 * share the global fields' names (one name, one field) and rules; a project's reads also find
 * the global fields, its writes only its own.
 */
import type { Db } from '../../db/client';
import type { Actor } from '../../db/events';
import { conflict, notFound } from '../../http/errors';
import { projectExists } from '../../db/lookups';
import { checkLegalValues, definition, fieldShape, fieldInUse, legalValuesOf, NAME_TAKEN } from './service';
import type { ContextFieldInput, ContextFieldUpdate } from './schema';
import * as store from './store';

export async function listFields(db: Db, project: string) {
  return (await store.listWithUsage(db, project)).map(fieldShape);
}

/** A global field or one of this project's (8.2.0's message when neither). */
export async function getField(db: Db, project: string, name: string) {
  const row = await store.byName(db, name);
  if (!row || (row.project !== null && row.project !== project)) throw notFound('Could not find context field');
  return fieldShape(row);
}

/** The project's own field; 8.2.0 words the 404 by whether the name exists at all. */
async function ownField(db: Db, project: string, name: string): Promise<store.ContextFieldRow> {
  const row = await store.byName(db, name);
  if (!row) throw notFound(`Could not find context field with name ${name}`);
  if (row.project !== project) throw notFound(`Could not find context field ${name} in project ${project}`);
  return row;
}

/** A write that changed nothing: the field went away (404) or changed hands meanwhile (409). */
async function changedMeanwhile(db: Db, project: string, name: string): Promise<never> {
  await ownField(db, project, name);
  throw conflict(`The context field ${name} changed while it was being written; try again.`);
}

export async function createField(db: Db, actor: Actor, project: string, body: ContextFieldInput) {
  checkLegalValues(body.legalValues);
  if (!(await projectExists(db, project))) throw notFound(`Could not find project with id ${project}`);
  const values = {
    description: body.description ?? null,
    stickiness: body.stickiness ?? false,
    sortOrder: body.sortOrder ?? 0,
    legalValues: legalValuesOf(body.legalValues),
  };
  const data = {
    name: body.name,
    description: values.description,
    legalValues: values.legalValues,
    stickiness: values.stickiness,
    project,
  };
  if (!(await store.insert(db, actor, body.name, values, { type: 'context-field-created', data }, project))) throw conflict(NAME_TAKEN);
  // Read without usage counts: the answer has none.
  return fieldShape((await store.byName(db, body.name))!);
}

/** Replaces the field's definition: what the body leaves out is reset (sort order included, as 8.2.0 does), the description kept. */
export async function updateField(db: Db, actor: Actor, project: string, name: string, body: ContextFieldUpdate): Promise<void> {
  const row = await ownField(db, project, name);
  checkLegalValues(body.legalValues);
  const values = {
    ...(body.description === undefined ? {} : { description: body.description }),
    stickiness: body.stickiness ?? false,
    // 8.2.0 resets a project field's sort order when the body leaves it out.
    sortOrder: body.sortOrder ?? 0,
    legalValues: legalValuesOf(body.legalValues),
  };
  const data = {
    ...definition(row),
    description: body.description === undefined ? row.description : body.description,
    legalValues: values.legalValues,
    stickiness: values.stickiness,
  };
  const event = { type: 'context-field-updated', data, preData: definition(row) };
  if (!(await store.update(db, actor, name, values, event, project))) await changedMeanwhile(db, project, name);
}

export async function putLegalValue(
  db: Db,
  actor: Actor,
  project: string,
  name: string,
  legalValue: { value: string; description?: string | null },
) {
  const row = await ownField(db, project, name);
  const [added] = legalValuesOf([legalValue]);
  const at = row.legalValues.findIndex((known) => known.value === added!.value);
  const legalValues = at === -1 ? [...row.legalValues, added!] : row.legalValues.map((known, index) => (index === at ? added! : known));
  const event = { type: 'context-field-updated', data: { ...definition(row), legalValues }, preData: definition(row) };
  if (!(await store.update(db, actor, name, { legalValues }, event, project))) await changedMeanwhile(db, project, name);
}

export async function deleteLegalValue(db: Db, actor: Actor, project: string, name: string, value: string): Promise<void> {
  const row = await ownField(db, project, name);
  const legalValues = row.legalValues.filter((known) => known.value !== value);
  const event = { type: 'context-field-updated', data: { ...definition(row), legalValues }, preData: definition(row) };
  if (!(await store.update(db, actor, name, { legalValues }, event, project))) await changedMeanwhile(db, project, name);
}

export async function deleteField(db: Db, actor: Actor, project: string, name: string): Promise<void> {
  const row = await ownField(db, project, name);
  if (await store.inUse(db, name)) throw fieldInUse();
  if (!(await store.remove(db, actor, name, { type: 'context-field-deleted', preData: definition(row) }, project))) {
    if (await store.inUse(db, name)) throw fieldInUse();
    throw notFound(`Could not find context field with name ${name}`);
  }
}

export async function strategiesUsing(db: Db, project: string, name: string) {
  return { strategies: await store.strategiesUsing(db, name, project) };
}
