// Unleash's password strength rule (owasp-password-strength-test with its defaults), for the
// scripts that set passwords outside the Worker. The Worker's copy is
// src/identity/passwords/password-policy.ts; test/admin-password.node.test.ts keeps the two equal.

const MIN_LENGTH = 10;
const MAX_LENGTH = 128;
const MIN_PHRASE_LENGTH = 20;

/** What a password lacks, in Unleash's words and order; empty when it is strong enough. */
export function passwordProblems(password) {
  const problems = [];
  if (password.length < MIN_LENGTH) problems.push(`The password must be at least ${MIN_LENGTH} characters long.`);
  if (password.length > MAX_LENGTH) problems.push(`The password must be fewer than ${MAX_LENGTH} characters.`);
  if (/(.)\1\1/su.test(password)) problems.push('The password may not contain sequences of three or more repeated characters.');
  if (password.length < MIN_PHRASE_LENGTH) {
    if (!/[a-z]/.test(password)) problems.push('The password must contain at least one lowercase letter.');
    if (!/[A-Z]/.test(password)) problems.push('The password must contain at least one uppercase letter.');
    if (!/[0-9]/.test(password)) problems.push('The password must contain at least one number.');
    if (!/[^A-Za-z0-9]/.test(password)) problems.push('The password must contain at least one special character.');
  }
  return problems;
}
