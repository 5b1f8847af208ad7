import * as v from 'valibot';
import { nonBlank, text } from '../../http/validation';

const CUSTOM_ROLE_TYPES = ['root-custom', 'custom'] as const;
export type CustomRoleType = (typeof CUSTOM_ROLE_TYPES)[number];

const PermissionItemSchema = v.object({
  id: v.optional(
    v.pipe(v.number(), v.integer('must be integer'), v.minValue(1, 'must be >= 1'), v.maxValue(2147483647, 'must be <= 2147483647')),
  ),
  name: v.optional(nonBlank(100)),
  environment: v.optional(v.nullable(text(100))),
});

/**
 * Both variants of the seed's custom role definition: permissions named by `name` (variant A)
 * or by `id` (variant B, `custom` roles only). The rules between fields and against the data
 * are checked in the service, so that every problem is reported at once. Unknown keys are
 * dropped, as Unleash does.
 */
export const RoleDefinitionSchema = v.object({
  name: nonBlank(255),
  description: v.optional(v.nullable(text(1000))),
  type: v.optional(
    v.pipe(
      v.string(),
      v.check((type) => (CUSTOM_ROLE_TYPES as readonly string[]).includes(type), 'must be one of "root-custom", "custom"'),
      v.transform((type) => type as CustomRoleType),
    ),
  ),
  permissions: v.optional(v.nullable(v.pipe(v.array(PermissionItemSchema), v.maxLength(1000, 'must have at most 1000 items')))),
});
export type RoleDefinition = v.InferOutput<typeof RoleDefinitionSchema>;

/** What `GET /api/admin/roles` answers with status 200. */
export const GetRolesResponse = v.object({
  roles: v.array(
    v.object({
      id: v.number(),
      type: v.string(),
      name: v.nullable(v.string()),
      description: v.nullable(v.string()),
      project: v.nullable(v.string()),
    }),
  ),
});

/** A role with its permissions, as the admin API answers it. */
export const RoleAnswer = v.object({
  id: v.number(),
  type: v.string(),
  name: v.nullable(v.string()),
  description: v.nullable(v.string()),
  project: v.nullable(v.string()),
  permissions: v.array(
    v.object({
      id: v.number(),
      name: v.nullable(v.string()),
      displayName: v.string(),
      type: v.string(),
      environment: v.optional(v.nullable(v.string())),
    }),
  ),
});

/** What `POST /api/admin/roles` answers with status 201. */
export const CreateRole201Response = RoleAnswer;

/** What `GET /api/admin/roles/:id` answers with status 200. */
export const GetRoleByIdResponse = RoleAnswer;

/** What `PUT /api/admin/roles/:id` answers with status 200. */
export const UpdateRoleResponse = RoleAnswer;

const CataloguePermission = v.object({ id: v.number(), name: v.string(), displayName: v.string(), type: v.string() });

/** What `GET /api/admin/permissions` answers: the catalogue, environment permissions once per environment. */
export const GetPermissionsResponse = v.object({
  permissions: v.object({
    root: v.array(CataloguePermission),
    project: v.array(CataloguePermission),
    environments: v.array(
      v.object({ name: v.string(), permissions: v.array(v.object({ ...CataloguePermission.entries, environment: v.string() })) }),
    ),
  }),
  version: v.number(),
});
