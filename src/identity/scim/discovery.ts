/**
 * SCIM's discovery documents (RFC 7644 §4, RFC 7643 §5-7): what this service provider
 * supports, its resource types, and the attributes of each it keeps.
 */
import { ScimError } from './errors';
import { USER_SCHEMA } from './user-resource';

export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
/** Most resources one list page holds. */
export const MAX_RESULTS = 200;

export function serviceProviderConfig(base: string) {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
    documentationUri: 'https://docs.getunleash.io/reference/scim',
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'OAuth Bearer Token',
        description: 'The SCIM token an admin generates in Admin settings → Single sign-on → SCIM, as `Authorization: Bearer <token>`.',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

const RESOURCE_TYPES = {
  User: { endpoint: '/Users', description: 'A person who signs in to Unleash', schema: USER_SCHEMA },
  Group: { endpoint: '/Groups', description: 'A group of people, with a root role and project access in Unleash', schema: GROUP_SCHEMA },
} as const;

function resourceType(id: keyof typeof RESOURCE_TYPES, base: string) {
  const type = RESOURCE_TYPES[id];
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
    id,
    name: id,
    endpoint: type.endpoint,
    description: type.description,
    schema: type.schema,
    meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/${id}` },
  };
}

function attribute(name: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    type: 'string',
    multiValued: false,
    required: false,
    caseExact: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
    ...extra,
  };
}

const SCHEMAS = {
  [USER_SCHEMA]: {
    name: 'User',
    description: 'A person',
    attributes: [
      attribute('userName', { required: true, uniqueness: 'server' }),
      attribute('externalId', { caseExact: true }),
      attribute('displayName'),
      attribute('name', { type: 'complex', subAttributes: [attribute('formatted'), attribute('givenName'), attribute('familyName')] }),
      attribute('emails', {
        type: 'complex',
        multiValued: true,
        subAttributes: [attribute('value'), attribute('type'), attribute('primary', { type: 'boolean' })],
      }),
      attribute('active', { type: 'boolean' }),
    ],
  },
  [GROUP_SCHEMA]: {
    name: 'Group',
    description: 'A group of people',
    attributes: [
      attribute('displayName', { required: true, uniqueness: 'server' }),
      attribute('externalId', { caseExact: true }),
      attribute('members', {
        type: 'complex',
        multiValued: true,
        subAttributes: [attribute('value', { mutability: 'immutable' }), attribute('display', { mutability: 'readOnly' })],
      }),
    ],
  },
} as const;

function schemaDocument(id: keyof typeof SCHEMAS, base: string) {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
    id,
    ...SCHEMAS[id],
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${id}` },
  };
}

export function listOf<T>(resources: T[], total = resources.length, startIndex = 1) {
  return { schemas: [LIST_SCHEMA], totalResults: total, itemsPerPage: resources.length, startIndex, Resources: resources };
}

export function resourceTypes(base: string) {
  return listOf([resourceType('User', base), resourceType('Group', base)]);
}

export function oneResourceType(id: string, base: string) {
  if (id !== 'User' && id !== 'Group') throw new ScimError(404, `Resource type ${JSON.stringify(id.slice(0, 100))} not found`);
  return resourceType(id, base);
}

export function schemas(base: string) {
  return listOf([schemaDocument(USER_SCHEMA, base), schemaDocument(GROUP_SCHEMA, base)]);
}

export function oneSchema(id: string, base: string) {
  if (id !== USER_SCHEMA && id !== GROUP_SCHEMA) throw new ScimError(404, `Schema ${JSON.stringify(id.slice(0, 200))} not found`);
  return schemaDocument(id, base);
}
