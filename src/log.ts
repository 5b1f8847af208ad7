import { secretPrefix } from './auth/secrets';

/**
 * Structured logging: one plain object per line, which Workers Logs indexes field by field.
 * Errors are passed as fields so their stack is kept. Never pass secrets here.
 */
type Fields = Record<string, unknown>;

/**
 * Drizzle's "Failed query" errors end their message (and stack) with the bound parameters,
 * which can be secrets, hashes or emails: they are cut. The cause (D1's own reason) is kept.
 */
function withoutParams(text: string | undefined): string | undefined {
  return text?.replace(/\nparams: [^\n]*/g, '\nparams: <redacted>');
}

function serialiseError(error: Error): Fields {
  const out: Fields = { name: error.name, message: withoutParams(error.message), stack: withoutParams(error.stack) };
  if (error.cause instanceof Error) out.cause = { name: error.cause.name, message: withoutParams(error.cause.message) };
  return out;
}

function serialise(fields: Fields): Fields {
  const out: Fields = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = value instanceof Error ? serialiseError(value) : value;
  }
  return out;
}

export const log = {
  info(msg: string, fields: Fields = {}): void {
    console.log({ level: 'info', msg, ...serialise(fields) });
  },
  warn(msg: string, fields: Fields = {}): void {
    console.warn({ level: 'warn', msg, ...serialise(fields) });
  },
  error(msg: string, fields: Fields = {}): void {
    console.error({ level: 'error', msg, ...serialise(fields) });
  },
};

/**
 * Paths whose segments are credentials: an API-token secret in `/api/admin/api-tokens/<secret>`
 * (Unleash addresses tokens by secret) and an invite secret in `/invite/<secret>/...` and
 * `/api/admin/invite-link/tokens/<secret>`. Logs keep only the first 6 characters of such a
 * segment (after the API token's `<scope>:<environment>.` part), enough to tell tokens apart.
 * Other helpers add their credential-bearing routes here.
 */
const CREDENTIAL_SEGMENTS: readonly { prefix: readonly string[]; at: number }[] = [
  { prefix: ['api', 'admin', 'api-tokens'], at: 3 },
  { prefix: ['api', 'admin', 'invite-link', 'tokens'], at: 4 },
  { prefix: ['invite'], at: 1 },
  // Project API tokens are deleted by their secret too; '*' stands for the project id.
  { prefix: ['api', 'admin', 'projects', '*', 'api-tokens'], at: 5 },
];

function maskSecret(segment: string): string {
  let decoded = segment;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    // a malformed escape is masked as it stands
  }
  return `${secretPrefix(decoded)}***`;
}

/** A request path fit for logs: credentials in it are cut to a short prefix. */
export function redactPath(pathname: string): string {
  const segments = pathname.split('/');
  // segments[0] is the empty string before the leading slash
  for (const { prefix, at } of CREDENTIAL_SEGMENTS) {
    const index = at + 1;
    if (segments.length <= index) continue;
    if (prefix.every((part, i) => part === '*' || segments[i + 1] === part)) segments[index] = maskSecret(segments[index]!);
  }
  return segments.join('/');
}
