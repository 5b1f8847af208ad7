import type { IRequest } from 'itty-router';
import { validationError } from './errors';

/** A path parameter, percent-decoded (itty-router hands them over encoded). */
export function pathParam(request: IRequest, name: string): string {
  const raw = request.params[name] ?? '';
  try {
    return decodeURIComponent(raw);
  } catch {
    throw validationError([{ path: `/params/${name}`, message: `The \`/params/${name}\` property is not a valid percent-encoded string.` }]);
  }
}
