/**
 * The binding's refusals (docs/binding.md, "Refusals"): an `Error` with a stable `kind` own
 * property and a message starting with the kind's name. Workers RPC rebuilds a thrown error on
 * the caller's side as a plain `Error` (a subclass does not cross), keeping its message and own
 * properties, so both carry the kind; the caller's helper (./client.ts) rethrows it typed.
 */
import { ApiError } from '../http/errors';
import { BINDING_ERRORS, type BindingErrorKind } from './types';

/** The message of every `unauthorized` refusal: it never says which of the three. */
export const UNKNOWN_KEY = 'the key is unknown, revoked or expired';

export function refused(kind: BindingErrorKind, message: string, cause?: unknown): Error {
  const error = new Error(`${BINDING_ERRORS[kind]}: ${message}`, cause === undefined ? undefined : { cause });
  return Object.assign(error, { kind });
}

/** HTTP's refusals the sources throw (Edge mode's upstream answers), as the binding's kinds. */
const KIND_OF_STATUS: Partial<Record<number, BindingErrorKind>> = {
  400: 'invalid',
  401: 'unauthorized',
  403: 'forbidden',
  503: 'unavailable',
  511: 'noScope',
};

/** `error` as a refusal of its kind when it is one of HTTP's, else unchanged (a fault, not a refusal). */
export function asRefusal(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  const kind = KIND_OF_STATUS[error.status];
  if (kind === undefined) return error;
  return refused(kind, kind === 'unauthorized' ? UNKNOWN_KEY : error.message, error);
}
