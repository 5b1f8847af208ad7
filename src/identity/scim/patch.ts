/**
 * SCIM PATCH (RFC 7644 §3.5.2) for Users: `add`, `replace` and `remove`, with or without a
 * path, in the forms Okta (`{op: "replace", value: {active: false}}`) and Entra ID (`Replace`
 * in any case, `path: "active"` with the string `"False"`, `emails[type eq "work"].value`,
 * `name.givenName`) send. Attributes we do not keep are accepted and ignored, so a client's
 * extra mappings do not fail its sync.
 */
import { invalidSyntax, invalidValue, ScimError } from './errors';
import { holdsFor, normalisePath, parseFilter } from './filter';
import type { UserFields } from './store';
import { attributeOf, booleanAttribute, emailOf, isObject, joinName, normaliseEmail, textAttribute } from './user-resource';

export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const MAX_OPERATIONS = 1000;
const WORK_EMAIL = { type: 'work', primary: true } as const;

export interface PatchOperation {
  op: 'add' | 'replace' | 'remove';
  path: string | null;
  value: unknown;
}

/** The operations of a PatchOp body; 400 invalidSyntax when it is not one. */
export function patchOperations(body: unknown): PatchOperation[] {
  if (!isObject(body)) throw invalidSyntax('The body must be a SCIM PatchOp object.');
  const operations = attributeOf(body, 'operations');
  if (!Array.isArray(operations) || operations.length === 0) throw invalidSyntax('"Operations" must be a non-empty list.');
  if (operations.length > MAX_OPERATIONS) throw invalidSyntax(`At most ${MAX_OPERATIONS} operations per request.`);
  return operations.map((operation) => {
    if (!isObject(operation)) throw invalidSyntax('Each operation must be an object.');
    const op = attributeOf(operation, 'op');
    const kind = typeof op === 'string' ? op.toLowerCase() : undefined;
    if (kind !== 'add' && kind !== 'replace' && kind !== 'remove') throw invalidSyntax('"op" must be "add", "replace" or "remove".');
    const path = attributeOf(operation, 'path');
    if (path !== undefined && path !== null && (typeof path !== 'string' || path.length > 1000 || !path.isWellFormed())) {
      throw invalidSyntax('"path" must be a string of at most 1000 characters.');
    }
    const value = attributeOf(operation, 'value');
    if (kind !== 'remove' && value === undefined) throw invalidSyntax(`"${kind}" needs a "value".`);
    if (kind === 'remove' && (path === undefined || path === null || path === ''))
      throw new ScimError(400, '"remove" needs a "path".', 'noTarget');
    return { op: kind, path: typeof path === 'string' && path !== '' ? path : null, value };
  });
}

interface NameParts {
  given: string | null;
  family: string | null;
}

/** Splits a stored name into given and family parts, for a patch of one of them. */
function partsOf(name: string | null): NameParts {
  if (name === null) return { given: null, family: null };
  const space = name.indexOf(' ');
  return space < 0 ? { given: name, family: null } : { given: name.slice(0, space), family: name.slice(space + 1) };
}

class UserPatch {
  private parts: NameParts | undefined;
  private displayNameSet = false;

  constructor(readonly fields: UserFields) {}

  set(path: string, value: unknown): void {
    switch (path) {
      case 'username': {
        const userName = textAttribute(value, 'userName');
        if (userName === null) throw new ScimError(400, '"userName" is required and cannot be removed.', 'mutability');
        this.fields.userName = userName;
        return;
      }
      case 'externalid':
        this.fields.externalId = textAttribute(value, 'externalId');
        return;
      case 'active':
        this.fields.active = value === null ? false : booleanAttribute(value, 'active');
        return;
      case 'displayname':
      case 'name.formatted':
        this.fields.name = textAttribute(value, path === 'displayname' ? 'displayName' : 'name.formatted');
        this.displayNameSet = true;
        return;
      case 'name.givenname':
      case 'name.familyname': {
        this.parts ??= partsOf(this.fields.name);
        const part = textAttribute(value, path === 'name.givenname' ? 'name.givenName' : 'name.familyName');
        if (path === 'name.givenname') this.parts.given = part;
        else this.parts.family = part;
        return;
      }
      case 'name':
        if (value === null) return this.set('displayname', null);
        if (!isObject(value)) throw invalidValue('"name" must be an object.');
        for (const [key, inner] of Object.entries(value)) this.set(`name.${key.toLowerCase()}`, inner);
        return;
      case 'emails':
        this.fields.email = value === null ? null : emailOf(Array.isArray(value) ? value : [value]);
        return;
      case 'emails.value':
        this.fields.email = normaliseEmail(textAttribute(value, 'emails.value'));
        return;
      default:
        // An attribute we do not keep (title, addresses, the enterprise extension…): ignored.
        return;
    }
  }

  /** A path with a value filter: only `emails[…]` (and `emails[…].value`) matching our one work email. */
  setFiltered(path: string, value: unknown): void {
    const open = path.indexOf('[');
    const close = path.lastIndexOf(']');
    if (close < open) throw new ScimError(400, `The path "${path.slice(0, 100)}" is not valid.`, 'invalidPath');
    const attribute = normalisePath(path.slice(0, open));
    const rest = path.slice(close + 1).toLowerCase();
    if (attribute !== 'emails') return;
    if (rest !== '' && rest !== '.value') return;
    if (!holdsFor(parseFilter(path.slice(open + 1, close)), WORK_EMAIL)) return;
    if (rest === '.value') this.set('emails.value', value);
    else this.set('emails', value === null ? null : value);
  }

  finish(): UserFields {
    if (this.parts !== undefined && !this.displayNameSet) this.fields.name = joinName(this.parts.given, this.parts.family);
    return this.fields;
  }
}

/** The fields after applying the operations to `current` (which is not changed). */
export function applyUserPatch(current: UserFields, operations: readonly PatchOperation[]): UserFields {
  const patch = new UserPatch({ ...current });
  for (const operation of operations) {
    const value = operation.op === 'remove' ? null : operation.value;
    if (operation.path === null) {
      if (!isObject(value)) throw invalidValue(`"${operation.op}" without a path needs an object "value".`);
      for (const [key, inner] of Object.entries(value)) {
        // Entra ID may send the enterprise extension as one key holding an object: ignored.
        patch.set(normalisePath(key), inner);
      }
    } else if (operation.path.includes('[')) {
      patch.setFiltered(operation.path, value);
    } else {
      patch.set(normalisePath(operation.path), value);
    }
  }
  return patch.finish();
}
