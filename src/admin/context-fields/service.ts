/** Context fields: what constraints and stickiness can refer to, with how often they are used. */
import type { Db } from '../../db/client';
import type { Actor } from '../../db/events';
import { ApiError, badRequest, conflict, notFound, validationError } from '../../http/errors';
import type * as v from 'valibot';
import type { ConstraintSchema } from '../features/schema';
import { constraintProblem } from '../features/rules';
import type { ContextFieldInput, ContextFieldUpdate } from './schema';
import * as store from './store';

type Row = store.ContextFieldRow & { usedInFeatures?: number; usedInProjects?: number };

/** The usage counts, where the row has them (the lists): typed as present for rows read with them. */
type UsageOf<R> = R extends { usedInProjects: number } ? { usedInProjects: number; usedInFeatures: number } : object;
function usageOf<R extends Row>(row: R): UsageOf<R> {
  return (row.usedInProjects === undefined ? {} : { usedInProjects: row.usedInProjects, usedInFeatures: row.usedInFeatures }) as UsageOf<R>;
}

export function fieldShape<R extends Row>(row: R) {
  return {
    name: row.name,
    description: row.description,
    stickiness: row.stickiness,
    sortOrder: row.sortOrder,
    legalValues: row.legalValues,
    createdAt: row.createdAt,
    ...usageOf(row),
    // A project's field (Unleash 8) says whose it is; global fields have no `project`.
    ...(row.project ? { project: row.project } : {}),
  };
}

export async function listFields(db: Db) {
  return (await store.listWithUsage(db)).map(fieldShape);
}

export async function getField(db: Db, name: string) {
  const row = await store.byName(db, name);
  if (!row) throw notFound('Could not find context field');
  return fieldShape(row);
}

function missing(name: string) {
  return notFound(`Could not find Context field with name ${name}`);
}

async function existing(db: Db, name: string): Promise<store.ContextFieldRow> {
  const row = await store.byName(db, name);
  if (!row) throw missing(name);
  return row;
}

/** Unleash's words (sic) for a name any field, global or a project's, already has. */
export const NAME_TAKEN = 'A context field with that name already exist';

/** The form's check of a new field's name: free (and URL friendly, checked by the schema). */
export async function validateName(db: Db, name: string): Promise<void> {
  if (await store.byName(db, name)) throw conflict(NAME_TAKEN);
}

/** Legal values are told apart by their value: each may appear once. */
export function checkLegalValues(legalValues: ContextFieldUpdate['legalValues']): void {
  const seen = new Set<string>();
  legalValues?.forEach((legalValue, index) => {
    if (seen.has(legalValue.value))
      throw validationError([
        { path: `/body/legalValues/${index}`, message: `"legalValues[${index}]" contains a duplicate value: "${legalValue.value}".` },
      ]);
    seen.add(legalValue.value);
  });
}

export function legalValuesOf(legalValues: ContextFieldUpdate['legalValues']) {
  return (legalValues ?? []).map((legalValue) =>
    legalValue.description === undefined || legalValue.description === null
      ? { value: legalValue.value }
      : { value: legalValue.value, description: legalValue.description },
  );
}

/** What the events record of a field: its definition without dates. */
export function definition(row: store.ContextFieldRow) {
  return {
    name: row.name,
    description: row.description,
    legalValues: row.legalValues,
    stickiness: row.stickiness,
    ...(row.project ? { project: row.project } : {}),
  };
}

export async function createField(db: Db, actor: Actor, body: ContextFieldInput) {
  checkLegalValues(body.legalValues);
  const values = {
    description: body.description ?? null,
    stickiness: body.stickiness ?? false,
    sortOrder: body.sortOrder ?? 0,
    legalValues: legalValuesOf(body.legalValues),
  };
  const data = { name: body.name, description: values.description, legalValues: values.legalValues, stickiness: values.stickiness };
  if (!(await store.insert(db, actor, body.name, values, { type: 'context-field-created', data }))) throw conflict(NAME_TAKEN);
  return fieldShape((await store.byName(db, body.name))!);
}

/**
 * Replaces the field's definition. As in Unleash, what the body leaves out is reset (no legal
 * values, not for stickiness) except the description; the name is the path's, so a field is
 * never renamed and the constraints naming it keep working. The sort order is kept unless given.
 */
export async function updateField(db: Db, actor: Actor, name: string, body: ContextFieldUpdate): Promise<void> {
  const row = await existing(db, name);
  checkLegalValues(body.legalValues);
  const values = {
    ...(body.description === undefined ? {} : { description: body.description }),
    stickiness: body.stickiness ?? false,
    ...(body.sortOrder === undefined ? {} : { sortOrder: body.sortOrder }),
    legalValues: legalValuesOf(body.legalValues),
  };
  const data = {
    name,
    description: body.description === undefined ? row.description : body.description,
    legalValues: values.legalValues,
    stickiness: values.stickiness,
  };
  const event = { type: 'context-field-updated', data, preData: definition(row) };
  if (!(await store.update(db, actor, name, values, event))) throw missing(name);
}

/** Adds a legal value, or replaces the description of the one with the same value. */
export async function putLegalValue(db: Db, actor: Actor, name: string, legalValue: { value: string; description?: string | null }) {
  const row = await existing(db, name);
  const [added] = legalValuesOf([legalValue]);
  const at = row.legalValues.findIndex((known) => known.value === added!.value);
  const legalValues = at === -1 ? [...row.legalValues, added!] : row.legalValues.map((known, index) => (index === at ? added! : known));
  const event = { type: 'context-field-updated', data: { ...definition(row), legalValues }, preData: definition(row) };
  if (!(await store.update(db, actor, name, { legalValues }, event))) throw missing(name);
}

/** Removes a legal value; removing one the field does not have changes nothing but still answers 200. */
export async function deleteLegalValue(db: Db, actor: Actor, name: string, value: string): Promise<void> {
  const row = await existing(db, name);
  const legalValues = row.legalValues.filter((known) => known.value !== value);
  const event = { type: 'context-field-updated', data: { ...definition(row), legalValues }, preData: definition(row) };
  if (!(await store.update(db, actor, name, { legalValues }, event))) throw missing(name);
}

/** 8.2.0's refusal to delete a field that strategies of active flags use. */
export function fieldInUse(): ApiError {
  return new ApiError(
    409,
    'ConflictError',
    'This context field is in use by existing flags. To delete it, first remove its usage from all flags.',
  );
}

/**
 * Deletes the field, unless a strategy of an active flag constrains on it (409, as 8.2.0;
 * 6.10.1 deletes it and leaves the constraints dangling). Archived flags' strategies keep
 * their constraints (they evaluate against whatever the SDK context holds under that name).
 */
export async function deleteField(db: Db, actor: Actor, name: string): Promise<void> {
  const row = await existing(db, name);
  if (await store.inUse(db, name)) throw fieldInUse();
  if (!(await store.remove(db, actor, name, { type: 'context-field-deleted', preData: definition(row) }))) {
    if (await store.inUse(db, name)) throw fieldInUse();
    throw missing(name);
  }
}

export async function strategiesUsing(db: Db, name: string) {
  return { strategies: await store.strategiesUsing(db, name) };
}

/**
 * The strategy form checks each constraint as it is edited: the context field must exist and
 * the value(s) fit the operator and the field's legal values.
 */
export async function validateConstraint(db: Db, constraint: v.InferOutput<typeof ConstraintSchema>): Promise<void> {
  const field = await store.byName(db, constraint.contextName);
  if (!field) throw notFound(`Could not find Context field with name ${constraint.contextName}`);
  const legal = field.legalValues.length > 0 ? new Set(field.legalValues.map((legalValue) => legalValue.value)) : undefined;
  const problem = constraintProblem(constraint, legal);
  if (problem) throw badRequest(problem);
}
