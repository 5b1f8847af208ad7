/**
 * A person as a SCIM User (RFC 7643 §4.1) and back. We keep what Unleash keeps of a person:
 * `userName` (our username), one name (`displayName`, else `name.formatted`, else given and
 * family names), one email (the primary, else the work one, else the first; else the userName
 * when it is an address), `externalId` and `active`. Other attributes are accepted and ignored.
 */
import type { ScimUserRow, UserFields } from './store';
import { invalidValue } from './errors';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
const MAX_TEXT = 255;
const EMAIL = /^[^\s@]+@[^\s@]+$/;

type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A string attribute: trimmed, at most 255 characters, no NUL or lone surrogate; null when empty or absent. */
export function textAttribute(value: unknown, attribute: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw invalidValue(`"${attribute}" must be a string.`);
  const trimmed = value.trim();
  if (trimmed.length > MAX_TEXT) throw invalidValue(`"${attribute}" must be at most ${MAX_TEXT} characters.`);
  if (!trimmed.isWellFormed() || trimmed.includes('\u0000')) throw invalidValue(`"${attribute}" is not well-formed text.`);
  return trimmed === '' ? null : trimmed;
}

/** `active`: a boolean, or the strings "True"/"False" Entra ID sends without its SCIM compliance flag. */
export function booleanAttribute(value: unknown, attribute: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
  throw invalidValue(`"${attribute}" must be true or false.`);
}

/** The same key in any letter case (attribute names are case-insensitive, RFC 7643 §2.1). */
export function attributeOf(object: Json, name: string): unknown {
  for (const [key, value] of Object.entries(object)) if (key.toLowerCase() === name) return value;
  return undefined;
}

export function normaliseEmail(value: string | null, attribute = 'emails'): string | null {
  if (value === null) return null;
  if (!EMAIL.test(value)) throw invalidValue(`"${attribute}" must be an email address.`);
  return value.toLowerCase();
}

/** The email of an `emails` list: primary, else type work, else the first. */
export function emailOf(emails: unknown): string | null {
  if (emails === undefined || emails === null) return null;
  if (!Array.isArray(emails) || emails.length > 20) throw invalidValue('"emails" must be a list of at most 20 addresses.');
  const entries = emails.map((entry) => {
    if (!isObject(entry)) throw invalidValue('Each of "emails" must be an object with a "value".');
    return entry;
  });
  const chosen =
    entries.find((entry) => attributeOf(entry, 'primary') === true || attributeOf(entry, 'primary') === 'True') ??
    entries.find((entry) => String(attributeOf(entry, 'type') ?? '').toLowerCase() === 'work') ??
    entries[0];
  return chosen === undefined ? null : normaliseEmail(textAttribute(attributeOf(chosen, 'value'), 'emails.value'));
}

/** A userName that is an email address doubles as the email when no `emails` are given. */
export function emailLike(userName: string): string | null {
  return EMAIL.test(userName) ? userName.toLowerCase() : null;
}

export function joinName(given: string | null, family: string | null): string | null {
  const joined = [given, family].filter((part) => part !== null).join(' ');
  return joined === '' ? null : joined;
}

/** The display name of a User body: displayName, name.formatted, or given and family names. */
function nameOf(body: Json): string | null {
  const display = textAttribute(attributeOf(body, 'displayname'), 'displayName');
  if (display !== null) return display;
  const name = attributeOf(body, 'name');
  if (name === undefined || name === null) return null;
  if (!isObject(name)) throw invalidValue('"name" must be an object.');
  return (
    textAttribute(attributeOf(name, 'formatted'), 'name.formatted') ??
    joinName(
      textAttribute(attributeOf(name, 'givenname'), 'name.givenName'),
      textAttribute(attributeOf(name, 'familyname'), 'name.familyName'),
    )
  );
}

/** The fields of a full User body (POST, PUT); 400 invalidValue naming the first problem. */
export function userFieldsOf(body: unknown): UserFields {
  if (!isObject(body)) throw invalidValue('The body must be a SCIM User object.');
  const userName = textAttribute(attributeOf(body, 'username'), 'userName');
  if (userName === null) throw invalidValue('"userName" is required.');
  const active = attributeOf(body, 'active');
  const email = emailOf(attributeOf(body, 'emails')) ?? emailLike(userName);
  return {
    userName,
    externalId: textAttribute(attributeOf(body, 'externalid'), 'externalId'),
    name: nameOf(body),
    email,
    active: active === undefined || active === null ? true : booleanAttribute(active, 'active'),
  };
}

export function fieldsOfRow(row: ScimUserRow): UserFields {
  return { userName: row.userName ?? '', externalId: row.externalId, name: row.name, email: row.email, active: row.deletedAt === null };
}

/** The SCIM User of a person; `base` is the service's SCIM base URL. */
export function userResource(row: ScimUserRow, base: string) {
  return {
    schemas: [USER_SCHEMA],
    id: row.scimId ?? '',
    ...(row.externalId !== null ? { externalId: row.externalId } : {}),
    userName: row.userName ?? '',
    ...(row.name !== null ? { name: { formatted: row.name }, displayName: row.name } : {}),
    emails: row.email !== null ? [{ value: row.email, type: 'work', primary: true }] : [],
    active: row.deletedAt === null,
    meta: {
      resourceType: 'User',
      created: row.createdAt,
      lastModified: row.updatedAt ?? row.createdAt,
      location: `${base}/Users/${row.scimId ?? ''}`,
    },
  };
}
