import * as v from 'valibot';
import { nonBlank, text } from '../../http/validation';
import { ApprovalCount } from '../change-requests/schema';
import { ConstraintAnswer, ConstraintSchema, StrategyVariantAnswer, StrategyVariantSchema } from '../features/schema';

/** What `GET /api/admin/environments` answers with status 200. */
export const GetAllEnvironmentsResponse = v.object({
  version: v.number(),
  environments: v.array(
    v.object({
      name: v.nullable(v.string()),
      type: v.string(),
      sortOrder: v.number(),
      enabled: v.boolean(),
      protected: v.boolean(),
      requiredApprovals: v.nullable(v.number()),
      projectCount: v.number(),
      apiTokenCount: v.number(),
      enabledToggleCount: v.number(),
    }),
  ),
});

const Environment = {
  name: v.string(),
  type: v.string(),
  sortOrder: v.number(),
  enabled: v.boolean(),
  protected: v.boolean(),
  requiredApprovals: v.nullable(v.number()),
};

/** What `GET /api/admin/environments/:name` answers with status 200. */
export const GetEnvironmentResponse = v.object(Environment);

const StrategyParameters = v.record(v.string(), v.string());

/** A project's default strategy in an environment, as stored and answered. */
export const DefaultStrategySchema = v.object({
  name: nonBlank(100),
  title: v.optional(v.nullable(text(255))),
  parameters: v.optional(
    v.pipe(
      StrategyParameters,
      v.check((value) => Object.keys(value).length <= 100, 'must have at most 100 properties'),
    ),
  ),
  constraints: v.optional(v.pipe(v.array(ConstraintSchema), v.maxLength(100, 'must have at most 100 items'))),
  segments: v.optional(v.pipe(v.array(v.number()), v.maxLength(5, 'must have at most 5 items'))),
  variants: v.optional(v.pipe(v.array(StrategyVariantSchema), v.maxLength(100, 'must have at most 100 items'))),
});

/** A project environment's default strategy as answered: what `DefaultStrategySchema` stored (Unleash's createFeatureStrategySchema). */
export const DefaultStrategyResponse = v.object({
  name: v.string(),
  title: v.optional(v.nullable(v.string())),
  segments: v.optional(v.array(v.number())),
  variants: v.optional(v.array(StrategyVariantAnswer)),
  parameters: v.optional(StrategyParameters),
  constraints: v.optional(v.array(ConstraintAnswer)),
});

/** What `GET /api/admin/environments/project/:projectId` answers with status 200. */
export const GetProjectEnvironmentsResponse = v.object({
  version: v.number(),
  environments: v.array(
    v.object({
      ...Environment,
      projectApiTokenCount: v.number(),
      projectEnabledToggleCount: v.number(),
      defaultStrategy: v.optional(DefaultStrategyResponse),
      visible: v.boolean(),
    }),
  ),
});

/** New sort orders by environment name. */
export const SortOrderSchema = v.pipe(
  v.record(
    text(100),
    v.pipe(
      v.number(),
      v.integer('must be integer'),
      v.minValue(-2147483648, 'must be >= -2147483648'),
      v.maxValue(2147483647, 'must be <= 2147483647'),
    ),
  ),
  v.check((value) => Object.keys(value).length <= 1000, 'must have at most 1000 properties'),
);

/** Unleash's environment name: RFC 3986 unreserved characters only. */
const EnvironmentName = v.pipe(
  text(100),
  v.regex(/^[a-zA-Z0-9~_.-]+$/, 'must match pattern "^[a-zA-Z0-9~_.-]+$"'),
  v.check((name) => name !== '.' && name !== '..', 'must be URL friendly'),
);

const SortOrder = v.pipe(
  v.number(),
  v.integer('must be integer'),
  v.minValue(-2147483648, 'must be >= -2147483648'),
  v.maxValue(2147483647, 'must be <= 2147483647'),
);

/** Approvals predefined for the projects the environment joins; null: none. */
const RequiredApprovals = v.optional(v.nullable(ApprovalCount));

/** Unleash Enterprise's createEnvironmentSchema. */
export const CreateEnvironmentSchema = v.object({
  name: EnvironmentName,
  type: nonBlank(100),
  enabled: v.optional(v.boolean()),
  sortOrder: v.optional(SortOrder),
  requiredApprovals: RequiredApprovals,
});

/** Unleash Enterprise's updateEnvironmentSchema: name, enabled and protected cannot change here; `requiredApprovals: null` clears it, absent keeps it. */
export const UpdateEnvironmentSchema = v.object({
  type: v.optional(nonBlank(100)),
  sortOrder: v.optional(SortOrder),
  requiredApprovals: RequiredApprovals,
});

/** Unleash's nameSchema, for checking a new environment's name. */
export const ValidateEnvironmentNameSchema = v.object({ name: EnvironmentName });

/** Unleash Enterprise's cloneEnvironmentSchema: the new environment, the projects it joins, and whether roles keep their rights there. */
export const CloneEnvironmentSchema = v.object({
  name: EnvironmentName,
  type: nonBlank(100),
  projects: v.optional(v.pipe(v.array(text(100)), v.maxLength(1000, 'must have at most 1000 items'))),
  clonePermissions: v.optional(v.boolean()),
});
