/**
 * The one error model: every failure is thrown as an ApiError and turned into Unleash's
 * error body `{ id, name, message, details: [{ message, ... }] }` in exactly one place
 * (`toErrorResponse`). Names follow the seed's table (ValidationError, NoAccessError,
 * ContentTypeerror, ...).
 */
import { log, redactPath } from '../log';

export interface ErrorDetail {
  message: string;
  path?: string;
  [key: string]: unknown;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    override readonly name: string,
    message: string,
    readonly details: ErrorDetail[] = [{ message }],
    /** Extra top-level keys Unleash adds to some errors (e.g. `permissions`). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }

  toJSON(): Record<string, unknown> {
    return { id: crypto.randomUUID(), name: this.name, message: this.message, details: this.details, ...this.extra };
  }
}

/** An error Unleash answers with `{ message }` only (its SDK API's refusal of a key of another type). */
export class BareMessageError extends ApiError {
  constructor(status: number, message: string) {
    super(status, 'NoAccessError', message);
  }

  override toJSON(): Record<string, unknown> {
    return { message: this.message };
  }
}

const VALIDATION_PREFIX = 'Request validation failed: your request body or params contain invalid data';

/** 400 for a list of problems, each named in `details`. */
export function validationError(details: ErrorDetail[]): ApiError {
  return new ApiError(400, 'ValidationError', `${VALIDATION_PREFIX}. Refer to the \`details\` list for more information.`, details);
}

/** 400 for one problem found by a service (Unleash's "invalid data: <reason>" form). */
export function badRequest(reason: string, extraDetail: Record<string, unknown> = {}): ApiError {
  return new ApiError(400, 'ValidationError', `${VALIDATION_PREFIX}: ${reason}`, [{ message: reason, ...extraDetail }]);
}

/** A 400 `ValidationError` under another name (a route's `badRequestName`); any other error as it is. */
export function renamedBadRequest(error: unknown, name: string): unknown {
  if (!(error instanceof ApiError) || error.status !== 400 || error.name !== 'ValidationError') return error;
  return new ApiError(400, name, error.message, error.details, error.extra);
}

/** Unleash's BadDataError: valid JSON whose data break a rule (e.g. variant weights). */
export function badData(reason: string): ApiError {
  return new ApiError(400, 'BadDataError', `${VALIDATION_PREFIX}: ${reason}`, [{ message: reason }]);
}

export function notFound(message: string): ApiError {
  return new ApiError(404, 'NotFoundError', message);
}

export function conflict(message: string): ApiError {
  return new ApiError(409, 'NameExistsError', message);
}

export function noAccess(message: string, extra: Record<string, unknown> = {}): ApiError {
  return new ApiError(403, 'NoAccessError', message, [{ message }], extra);
}

/** What the login page offers besides the password form (Unleash Enterprise's `options`), and whether that form is hidden. */
export interface LoginHints {
  defaultHidden: boolean;
  options: readonly { type: string; message: string; path: string }[];
}

export function authenticationRequired(headerPresent: boolean, hints: LoginHints = { defaultHidden: false, options: [] }): ApiError {
  if (headerPresent) return new ApiError(401, 'AuthenticationRequired', 'You must log in to use Unleash.');
  const message =
    'You must log in to use Unleash. Your request had no authorization header, so we could not authorize you. Try logging in at /auth/simple/login';
  return new ApiError(401, 'AuthenticationRequired', message, [{ message }], {
    path: '/auth/simple/login',
    type: 'password',
    defaultHidden: hints.defaultHidden,
    // Single sign-on buttons, as Unleash Enterprise lists them; the UI's login page shows one per entry.
    ...(hints.options.length > 0 ? { options: hints.options } : {}),
  });
}

/**
 * A failed sign-in: unknown account, wrong password, no password, locked - one answer for all,
 * so the answer tells nothing about the account. Unleash's PasswordMismatch message, under
 * the seed's 401 name.
 */
export function loginFailed(): ApiError {
  return new ApiError(
    401,
    'AuthenticationRequired',
    'The combination of password and username you provided is invalid. If you have forgotten your password, visit /forgotten-password or get in touch with your instance administrator.',
  );
}

export function oldPasswordInvalid(): ApiError {
  return new ApiError(
    401,
    'AuthenticationRequired',
    'The old password you provided is invalid. If you have forgotten your password, visit /forgotten-password or get in touch with your instance administrator.',
  );
}

export function unsupportedContentType(contentType: string | null): ApiError {
  const given = contentType ? contentType : "you didn't provide one";
  return new ApiError(
    415,
    'ContentTypeerror',
    `We do not accept the content-type you provided (${given}). Try using one of the content-types we do accept instead (application/json) and make sure the body is in the corresponding format.`,
  );
}

export function pathNotFound(pathname: string): ApiError {
  return notFound(`The path you were looking for (${pathname}) is not available.`);
}

export const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' } as const;

/** The single place where anything thrown becomes an HTTP response. */
export function toErrorResponse(error: unknown, request?: Request): Response {
  if (error instanceof ApiError) {
    return new Response(JSON.stringify(error), { status: error.status, headers: JSON_HEADERS });
  }
  // Unexpected: log the cause with the request line (credentials in the path cut to a
  // prefix), answer without stack or SQL text.
  const url = request ? new URL(request.url) : undefined;
  log.error('unhandled error', { method: request?.method, path: url ? redactPath(url.pathname) : undefined, error });
  const body = {
    id: crypto.randomUUID(),
    name: 'UnknownError',
    message: 'Unexpected error occurred. The error has been logged; please try again later.',
    details: [{ message: 'Unexpected error occurred.' }],
  };
  return new Response(JSON.stringify(body), { status: 500, headers: JSON_HEADERS });
}
