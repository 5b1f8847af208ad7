/** Context fields: what constraints and stickiness can refer to, with how often they are used. */
import type * as v from 'valibot';
import { asc, eq, isNull, sql } from 'drizzle-orm';
import { getDb } from '../../db/client';
import { contextFields } from '../../db/schema';
import { badRequest, notFound } from '../../http/errors';
import { readJsonBody } from '../../http/body';
import { parseInput } from '../../http/validation';
import { ConstraintSchema } from '../features/schema';
import { constraintProblem } from '../import-export/rules';
import { pathParam } from '../../http/params';
import { empty, json } from '../../http/responses';
import { authenticated, route, type Route, type AdminContext } from '../../http/route';
import { GetContextFieldsResponse, GetContextFieldResponse } from './schema';

// Unleash counts the projects and active features whose strategies constrain on the field.
const usage = {
  usedInFeatures: sql<number>`(SELECT count(DISTINCT fs.feature_name) FROM feature_strategies fs JOIN features f ON f.name = fs.feature_name
    WHERE f.archived_at IS NULL AND EXISTS (SELECT 1 FROM json_each(fs.constraints) c WHERE json_extract(c.value, '$.contextName') = context_fields.name))`,
  usedInProjects: sql<number>`(SELECT count(DISTINCT fs.project_name) FROM feature_strategies fs JOIN features f ON f.name = fs.feature_name
    WHERE f.archived_at IS NULL AND EXISTS (SELECT 1 FROM json_each(fs.constraints) c WHERE json_extract(c.value, '$.contextName') = context_fields.name))`,
};

type Row = typeof contextFields.$inferSelect & { usedInFeatures?: number; usedInProjects?: number };

function fieldShape(row: Row) {
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

export async function list({ env }: AdminContext): Promise<Response> {
  const rows = await getDb(env)
    .select({
      name: contextFields.name,
      description: contextFields.description,
      stickiness: contextFields.stickiness,
      sortOrder: contextFields.sortOrder,
      legalValues: contextFields.legalValues,
      createdAt: contextFields.createdAt,
      project: contextFields.project,
      updatedAt: contextFields.updatedAt,
      ...usage,
    })
    .from(contextFields)
    .where(isNull(contextFields.project))
    .orderBy(asc(contextFields.name));
  return json(rows.map(fieldShape));
}

export async function get({ request, env }: AdminContext): Promise<Response> {
  const name = pathParam(request, 'name');
  const [row] = await getDb(env).select().from(contextFields).where(eq(contextFields.name, name)).limit(1);
  if (!row) throw notFound('Could not find context field');
  return json(fieldShape(row));
}

/**
 * The strategy form checks each constraint as it is edited: the context field must exist and
 * the value(s) fit the operator and the field's legal values. 204 when it would be accepted.
 */
export async function validateConstraint({ request, env, body }: AdminContext<v.InferOutput<typeof ConstraintSchema>>): Promise<Response> {
  const constraint = body;
  const [field] = await getDb(env).select().from(contextFields).where(eq(contextFields.name, constraint.contextName)).limit(1);
  if (!field) throw notFound(`Could not find Context field with name ${constraint.contextName}`);
  const legal = field.legalValues.length > 0 ? new Set(field.legalValues.map((legalValue) => legalValue.value)) : undefined;
  const problem = constraintProblem(constraint, legal);
  if (problem) throw badRequest(problem);
  return empty(204);
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/context',
    access: authenticated(),
    tag: 'Context',
    operationId: 'getContextFields',
    summary: 'List context fields',
    responses: { 200: { description: 'Success', schema: GetContextFieldsResponse } },
    handler: list,
  }),
  route({
    method: 'GET',
    path: '/api/admin/context/:name',
    access: authenticated(),
    tag: 'Context',
    operationId: 'getContextField',
    summary: 'Get a context field',
    responses: { 200: { description: 'Success', schema: GetContextFieldResponse } },
    errors: [400, 404],
    handler: get,
  }),
  route({
    method: 'POST',
    path: '/api/admin/constraints/validate',
    access: authenticated(),
    tag: 'Features',
    operationId: 'validateConstraint',
    summary: 'Check a constraint',
    body: ConstraintSchema,
    responses: { 204: { description: 'Done, no content', schema: null } },
    errors: [400, 404, 413],
    handler: validateConstraint,
  }),
];
