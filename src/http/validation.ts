/**
 * valibot at the edge of every handler: parse once, turn issues into Unleash-style
 * details (`The \`/body/x\` property must be ...`), hand typed output to the service.
 */
import * as v from 'valibot';
import { validationError, type ErrorDetail } from './errors';

export type Location = '/body' | '/query' | '/params';

/** A short, safe rendering of what the client sent, for error messages. */
export function preview(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    // Too deep to render (or cyclic): say what it is rather than fail while reporting.
    text = Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : typeof value;
  }
  if (text === undefined) text = typeof value;
  return text.length > 100 ? `${text.slice(0, 97)}...` : text;
}

function pathOf(root: Location, path: readonly v.IssuePathItem[] = []): string {
  return [root, ...path.map((item) => String(item.key))].join('/');
}

const TYPE_NAMES: Record<string, string> = { Object: 'object', Array: 'array' };

/**
 * Marks a check's message as the whole detail, without a path: Unleash's second validator
 * (Joi) words some problems that way, e.g. `"type" must be URL friendly. You provided "a b".`
 */
const WHOLE_DETAIL = '\u0000whole:';

/** A check message that is the detail's whole text (no path, no "The `x` property" frame). */
function wholeDetail(message: string): string {
  return `${WHOLE_DETAIL}${message}`;
}

function describeIssue(root: Location, issue: v.BaseIssue<unknown>): ErrorDetail {
  if (issue.kind !== 'schema' && issue.message.startsWith(WHOLE_DETAIL)) return { message: issue.message.slice(WHOLE_DETAIL.length) };
  const path = pathOf(root, issue.path);
  if (issue.kind === 'schema') {
    // A strict object reports both unknown keys (expected `never`) and missing ones.
    if (issue.type === 'strict_object' && issue.expected === 'never' && issue.path?.length) {
      const parent = pathOf(root, issue.path.slice(0, -1));
      return {
        path,
        message: `The \`${parent}\` object of the request ${root.slice(1)} does not allow additional properties. Your request included the \`${path}\` property.`,
      };
    }
    if (issue.input === undefined && issue.path?.length) {
      return { path, message: `The \`${path}\` property is required. It was not present on the data you sent.` };
    }
    // A list of allowed values named in the schema's own words (as 6.10.1 words them:
    // `must be equal to one of the allowed values: "variable", "fix"`).
    if (issue.type === 'picklist' && issue.message.startsWith('must '))
      return { path, message: `The \`${path}\` property ${issue.message}. You sent ${preview(issue.input)}.` };
    const expected = issue.expected ? (TYPE_NAMES[issue.expected] ?? issue.expected) : issue.type;
    return { path, message: `The \`${path}\` property must be ${expected}. You sent ${preview(issue.input)}.` };
  }
  return { path, message: `The \`${path}\` property ${issue.message}. You sent ${preview(issue.input)}.` };
}

/**
 * Unleash-style details for issues found in a part of the input, `prefix` being that part's
 * path (e.g. `['data', 'features', 3]` for one element of a streamed body).
 */
export function describeIssues(
  root: Location,
  issues: readonly v.BaseIssue<unknown>[],
  prefix: readonly (string | number)[] = [],
): ErrorDetail[] {
  const head = prefix.map((key) => ({ key }) as unknown as v.IssuePathItem);
  return issues.map((issue) =>
    describeIssue(root, prefix.length === 0 ? issue : { ...issue, path: [...head, ...(issue.path ?? [])] as typeof issue.path }),
  );
}

const OBJECT_SCHEMAS = new Set(['object', 'strict_object', 'loose_object', 'object_with_rest']);

/** Parses `input` with `schema` or throws a 400 ValidationError naming every problem. */
export function parseInput<TSchema extends v.GenericSchema>(schema: TSchema, input: unknown, root: Location): v.InferOutput<TSchema> {
  // valibot's object schemas take arrays for objects; JSON arrays are never objects here.
  if (Array.isArray(input) && OBJECT_SCHEMAS.has(schema.type)) {
    throw validationError([{ path: root, message: `The \`${root}\` property must be object. You sent ${preview(input)}.` }]);
  }
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  throw validationError(describeIssues(root, result.issues));
}

// ---------------------------------------------------------------------------------------
// Building blocks shared by the modules' schemas. Messages are phrased to follow
// "The `<path>` property ...".

function isCleanText(text: string): boolean {
  return text.isWellFormed() && !text.includes('\u0000');
}

/** A string with no NUL bytes or lone surrogates, at most `max` characters. */
export function text(max = 255) {
  return v.pipe(
    v.string(),
    v.check(isCleanText, 'must be well-formed text without NUL characters'),
    v.maxLength(max, `must be at most ${max} characters long`),
  );
}

/**
 * `text` that also takes a number or boolean and stores it as its string: Unleash's validator
 * coerces these (`"icon": 125` is stored as "125"), and clients written against it send them.
 */
export function coercedText(max = 255) {
  return v.pipe(
    v.union([v.string(), v.number(), v.boolean()], 'must be string'),
    v.transform((input) => String(input)),
    text(max),
  );
}

/** Like `text` but trimmed and not empty. */
export function nonBlank(max = 255) {
  return v.pipe(text(max), v.trim(), v.nonEmpty('must not be empty'));
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+-]\d{2}:?\d{2})?$/;

/** Parses an RFC 3339 date-time (a missing zone means UTC, as Unleash reads it). */
export function parseDateTime(input: string): Date | undefined {
  const match = DATE_TIME.exec(input);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second = '00', fraction = '', zone = 'Z'] = match;
  const y = Number(year);
  const mo = Number(month);
  const d = Number(day);
  if (mo < 1 || mo > 12 || d < 1 || d > new Date(Date.UTC(y, mo, 0)).getUTCDate()) return undefined;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 60) return undefined;
  const ms = fraction ? fraction.slice(0, 4).padEnd(4, '0') : '';
  const normalisedZone = zone.toUpperCase() === 'Z' ? 'Z' : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
  const date = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second === '60' ? '59' : second}${ms}${normalisedZone}`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** A date-time string, output as ISO-8601 UTC with milliseconds. */
export const dateTime = v.pipe(
  v.string(),
  v.maxLength(64, 'must match format "date-time"'),
  v.check((input) => parseDateTime(input) !== undefined, 'must match format "date-time"'),
  v.transform((input) => parseDateTime(input)!.toISOString()),
);

/** Epoch milliseconds as a date, when they name one (0 to year 275760), else undefined. */
export function epochMillis(input: unknown): Date | undefined {
  if (typeof input !== 'number' || !Number.isInteger(input) || input < 0 || input > 8.64e15) return undefined;
  return new Date(input);
}

/**
 * Unleash's `dateSchema`: a date-time string or a number, which Unleash reads as epoch
 * milliseconds (what SDKs that send `Date.now()` mean); output as ISO-8601 UTC.
 */
export const dateTimeOrEpochMs = v.union(
  [
    dateTime,
    v.pipe(
      v.number(),
      v.check((input) => epochMillis(input) !== undefined, 'must be epoch milliseconds'),
      v.transform((input) => epochMillis(input)!.toISOString()),
    ),
  ],
  'must be a date-time or epoch milliseconds',
);

/** A positive integer that fits SQLite and JavaScript safely (ids in paths). */
export const integerId = v.pipe(
  v.string(),
  v.regex(/^\s*[+-]?\d{1,10}\s*$/, 'must be integer'),
  v.transform((input) => Number(input)),
);

/**
 * Unleash's "URL friendly": the name survives `encodeURIComponent` unchanged and is not a
 * relative path segment, so it can sit in a path without escaping.
 */
function isUrlFriendly(name: string): boolean {
  // encodeURIComponent throws on lone surrogates; such text is not URL friendly either.
  return name !== '.' && name !== '..' && name.isWellFormed() && encodeURIComponent(name) === name;
}

/**
 * A name that must be URL friendly, refused in the words of Unleash's second validator:
 * `"<field>" must be URL friendly. You provided "<name>".` (tag types and tags).
 */
export function urlFriendlyField(field: string, max = 100, min = 1) {
  return v.pipe(
    text(max),
    v.minLength(min, min === 1 ? 'must not be empty' : `must be at least ${min} characters long`),
    v.check(isUrlFriendly, (issue) => wholeDetail(`"${field}" must be URL friendly. You provided "${String(issue.input)}".`)),
  );
}

/** A feature, project or tag-type name as Unleash accepts it. */
export function urlFriendlyName(max = 100, min = 1) {
  return v.pipe(
    text(max),
    v.minLength(min, min === 1 ? 'must not be empty' : `must be at least ${min} characters long`),
    v.check(isUrlFriendly, 'must be URL friendly'),
  );
}
