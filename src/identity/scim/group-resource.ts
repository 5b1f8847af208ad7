/**
 * A group as a SCIM Group (RFC 7643 §4.2) and back, and PATCH of groups in the forms Okta
 * (`replace` of `members` or without a path, `remove` of `members[value eq "…"]`) and Entra ID
 * (`Add`/`Remove` of `members` with a list of `{value}`, `Replace` of `displayName`) send.
 */
import { GROUP_SCHEMA } from './discovery';
import { invalidValue, ScimError } from './errors';
import { holdsFor, normalisePath, parseFilter } from './filter';
import type { ScimGroupRow, ScimMember } from './group-store';
import type { PatchOperation } from './patch';
import { attributeOf, isObject, textAttribute } from './user-resource';

/** What a SCIM client controls of a group: its name, its external id and its members (SCIM User ids). */
export interface GroupFields {
  displayName: string;
  externalId: string | null;
  members: string[];
}

const MAX_MEMBERS = 10_000;

function memberValues(value: unknown): string[] {
  const list = Array.isArray(value) ? value : [value];
  if (list.length > MAX_MEMBERS) throw invalidValue(`At most ${MAX_MEMBERS} members per request.`);
  return list.map((member) => {
    const id = isObject(member) ? textAttribute(attributeOf(member, 'value'), 'members.value') : null;
    if (id === null) throw invalidValue('Each member must be an object with a "value": the SCIM id of a User.');
    return id;
  });
}

/** The fields of a full Group body (POST, PUT). */
export function groupFieldsOf(body: unknown): GroupFields {
  if (!isObject(body)) throw invalidValue('The body must be a SCIM Group object.');
  const displayName = textAttribute(attributeOf(body, 'displayname'), 'displayName');
  if (displayName === null) throw invalidValue('"displayName" is required.');
  const members = attributeOf(body, 'members');
  return {
    displayName,
    externalId: textAttribute(attributeOf(body, 'externalid'), 'externalId'),
    members: members === undefined || members === null ? [] : [...new Set(memberValues(members))],
  };
}

export function groupResource(row: ScimGroupRow, members: readonly ScimMember[], base: string) {
  return {
    schemas: [GROUP_SCHEMA],
    id: row.scimId ?? '',
    ...(row.externalId !== null ? { externalId: row.externalId } : {}),
    displayName: row.name,
    members: members.map((member) => ({
      value: member.value,
      ...(member.display !== null ? { display: member.display } : {}),
      $ref: `${base}/Users/${member.value}`,
    })),
    meta: { resourceType: 'Group', created: row.createdAt, lastModified: row.createdAt, location: `${base}/Groups/${row.scimId ?? ''}` },
  };
}

/** The fields after the PATCH operations (`current` is not changed). */
export function applyGroupPatch(current: GroupFields, operations: readonly PatchOperation[]): GroupFields {
  const fields = { ...current, members: new Set(current.members) };
  const set = (path: string, op: PatchOperation['op'], value: unknown) => {
    switch (path) {
      case 'displayname': {
        const name = textAttribute(value, 'displayName');
        if (name === null) throw new ScimError(400, '"displayName" is required and cannot be removed.', 'mutability');
        fields.displayName = name;
        return;
      }
      case 'externalid':
        fields.externalId = textAttribute(value, 'externalId');
        return;
      case 'members':
        if (op === 'replace') fields.members.clear();
        if (op === 'remove') {
          // Entra ID names the members to remove in `value`; without one, every member goes.
          if (value === null || value === undefined) fields.members.clear();
          else for (const id of memberValues(value)) fields.members.delete(id);
          return;
        }
        for (const id of memberValues(value)) fields.members.add(id);
        return;
      default:
        return; // an attribute we do not keep
    }
  };
  for (const operation of operations) {
    if (operation.path === null) {
      if (!isObject(operation.value)) throw invalidValue(`"${operation.op}" without a path needs an object "value".`);
      for (const [key, inner] of Object.entries(operation.value))
        if (normalisePath(key) !== 'id') set(normalisePath(key), operation.op, inner);
    } else if (operation.path.includes('[')) {
      // `members[value eq "…"]`: the members it selects are removed (or replaced by `value`).
      const open = operation.path.indexOf('[');
      const close = operation.path.lastIndexOf(']');
      if (close < open || normalisePath(operation.path.slice(0, open)) !== 'members') {
        throw new ScimError(400, `The path "${operation.path.slice(0, 100)}" is not supported.`, 'invalidPath');
      }
      const filter = parseFilter(operation.path.slice(open + 1, close));
      for (const id of [...fields.members]) if (holdsFor(filter, { value: id })) fields.members.delete(id);
      if (operation.op !== 'remove') for (const id of memberValues(operation.value)) fields.members.add(id);
    } else {
      set(normalisePath(operation.path), operation.op, operation.op === 'remove' ? (operation.value ?? null) : operation.value);
    }
  }
  return { ...fields, members: [...fields.members] };
}
