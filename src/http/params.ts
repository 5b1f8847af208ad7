import type { IRequest } from 'itty-router';
import { validationError } from './errors';
import { preview } from './validation';

/**
 * A path parameter, percent-decoded (itty-router hands them over encoded); '' when absent. The
 * one path-parameter decoder: a malformed escape (`%ZZ`) answers 400 ValidationError naming
 * `/params/<name>`, in Unleash's shape, rather than being read as the raw text.
 */
function pathParam(request: IRequest, name: string): string {
  const raw = request.params[name] ?? '';
  try {
    return decodeURIComponent(raw);
  } catch {
    throw validationError([
      { path: `/params/${name}`, message: `The \`/params/${name}\` property is not a valid percent-encoded string.` },
    ]);
  }
}

/** Every path parameter of the matched route, percent-decoded (400 on a malformed escape). */
export function decodePathParams(request: IRequest): Record<string, string> {
  const decoded: Record<string, string> = {};
  for (const name of Object.keys(request.params)) decoded[name] = pathParam(request, name);
  return decoded;
}

/** Longest query parameter value we read; longer ones are refused before any parsing. */
const MAX_QUERY_PARAM_LENGTH = 4000;

/** 400 naming a query parameter, in the words valibot's messages use for bodies. */
export function invalidQueryParam(name: string, what: string, sent: unknown): never {
  const path = `/query/${name}`;
  throw validationError([{ path, message: `The \`${path}\` property ${what}. You sent ${preview(sent)}.` }]);
}

/**
 * The query parameters of `names` that may appear once: each repeated one, each longer than
 * MAX_QUERY_PARAM_LENGTH and each that is not well-formed text (lone surrogates, NUL) is a 400.
 */
export function singleQueryParams<Name extends string>(
  searchParams: URLSearchParams,
  names: readonly Name[],
): Partial<Record<Name, string>> {
  const single: Partial<Record<Name, string>> = {};
  for (const name of names) {
    const values = searchParams.getAll(name);
    if (values.length > 1) invalidQueryParam(name, 'must be string', values);
    const value = values[0];
    if (value === undefined) continue;
    if (value.length > MAX_QUERY_PARAM_LENGTH) invalidQueryParam(name, `must be at most ${MAX_QUERY_PARAM_LENGTH} characters long`, value);
    if (!value.isWellFormed() || value.includes('\u0000'))
      invalidQueryParam(name, 'must be well-formed text without NUL characters', value);
    single[name] = value;
  }
  return single;
}
