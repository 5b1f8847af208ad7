/** Valibot schemas of the SCIM settings API and of SCIM's documents, as the OpenAPI document shows them. */
import * as v from 'valibot';

export const ScimSettingsAnswer = v.object({
  enabled: v.boolean(),
  assumeControlOfExisting: v.boolean(),
  hasToken: v.boolean(),
});

export const SetScimSettingsSchema = v.object({
  enabled: v.boolean(),
  assumeControlOfExisting: v.optional(v.boolean()),
});

export const ScimTokenAnswer = v.object({ token: v.pipe(v.string(), v.description('Shown once; only its hash is kept')) });

export const ScimErrorSchema = v.object({
  schemas: v.array(v.string()),
  status: v.string(),
  scimType: v.optional(v.string()),
  detail: v.string(),
});

const Meta = v.looseObject({ resourceType: v.string(), location: v.string() });

export const ScimUserSchema = v.looseObject({
  schemas: v.array(v.string()),
  id: v.string(),
  externalId: v.optional(v.string()),
  userName: v.string(),
  displayName: v.optional(v.string()),
  emails: v.optional(v.array(v.looseObject({ value: v.string() }))),
  active: v.optional(v.boolean()),
  meta: v.optional(Meta),
});

export const ScimGroupSchema = v.looseObject({
  schemas: v.array(v.string()),
  id: v.string(),
  externalId: v.optional(v.string()),
  displayName: v.string(),
  members: v.optional(v.array(v.looseObject({ value: v.string(), display: v.optional(v.string()) }))),
  meta: v.optional(Meta),
});

/** A list answer; its `Resources` are Users, Groups, resource types or schemas. */
export const ScimListSchema = v.looseObject({
  schemas: v.array(v.string()),
  totalResults: v.number(),
  itemsPerPage: v.number(),
  startIndex: v.number(),
  Resources: v.array(v.looseObject({})),
});

/** Discovery documents (ServiceProviderConfig, a ResourceType, a Schema). */
export const ScimDocumentSchema = v.looseObject({ schemas: v.array(v.string()) });

export const ScimPatchSchema = v.looseObject({
  schemas: v.optional(v.array(v.string())),
  Operations: v.array(v.looseObject({ op: v.string(), path: v.optional(v.string()), value: v.optional(v.unknown()) })),
});

export const ScimListQuery = v.object({
  filter: v.optional(v.pipe(v.string(), v.description('e.g. userName eq "ada@example.com"'))),
  startIndex: v.optional(v.string()),
  count: v.optional(v.string()),
  attributes: v.optional(v.string()),
  excludedAttributes: v.optional(v.string()),
});
