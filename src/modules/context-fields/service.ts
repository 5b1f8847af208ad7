/** Context fields: what constraints and stickiness can refer to, with how often they are used. */
import type { Db } from '../../db/client';
import { badRequest, notFound } from '../../http/errors';
import type * as v from 'valibot';
import type { ConstraintSchema } from '../features/schema';
import { constraintProblem } from '../import-export/rules';
import * as store from './store';

type Row = store.ContextFieldRow & { usedInFeatures?: number; usedInProjects?: number };

export function fieldShape(row: Row) {
  return {
    name: row.name,
    description: row.description,
    stickiness: row.stickiness,
    sortOrder: row.sortOrder,
    legalValues: row.legalValues,
    createdAt: row.createdAt,
    ...(row.usedInProjects === undefined ? {} : { usedInProjects: row.usedInProjects, usedInFeatures: row.usedInFeatures }),
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
