/**
 * Unleash's password strength rule (owasp-password-strength-test with its defaults, which
 * Unleash 6 uses): 10 to 128 characters, no character three times in a row, and - unless the
 * password is a passphrase of 20 characters or more - a lowercase letter, an uppercase
 * letter, a digit and a special character. Messages are the library's, in its order.
 */
import { ApiError } from '../../http/errors';

const MIN_LENGTH = 10;
const MAX_LENGTH = 128;
const MIN_PHRASE_LENGTH = 20;

const REQUIRED: readonly [(password: string) => boolean, string][] = [
  [(password) => password.length >= MIN_LENGTH, `The password must be at least ${MIN_LENGTH} characters long.`],
  [(password) => password.length <= MAX_LENGTH, `The password must be fewer than ${MAX_LENGTH} characters.`],
  [(password) => !/(.)\1\1/su.test(password), 'The password may not contain sequences of three or more repeated characters.'],
];

const OPTIONAL: readonly [RegExp, string][] = [
  [/[a-z]/, 'The password must contain at least one lowercase letter.'],
  [/[A-Z]/, 'The password must contain at least one uppercase letter.'],
  [/[0-9]/, 'The password must contain at least one number.'],
  [/[^A-Za-z0-9]/, 'The password must contain at least one special character.'],
];

/** What a password lacks, in Unleash's words; empty when it is strong enough. */
export function passwordProblems(password: string): string[] {
  const problems = REQUIRED.filter(([passes]) => !passes(password)).map(([, message]) => message);
  if (password.length < MIN_PHRASE_LENGTH) {
    for (const [pattern, message] of OPTIONAL) if (!pattern.test(password)) problems.push(message);
  }
  return problems;
}

/**
 * 400 unless the password is strong enough. The body is Unleash's OwaspValidationError (first
 * problem as the message, all of them in `details[0].validationErrors`, which the UI's
 * password checker lists) under the seed's error name.
 */
export function requireStrongPassword(password: string): void {
  const problems = passwordProblems(password);
  const [first] = problems;
  if (first === undefined) return;
  throw new ApiError(400, 'ValidationError', first, [{ validationErrors: problems, message: first }]);
}
