/**
 * Frontend-API answers kept per (environment, data revision, token scope, context). A
 * browser SDK polls with the same context (it keeps its sessionId), so a repeated poll
 * reuses the body and ETag instead of evaluating every flag again. Only answers whose
 * evaluation read neither the clock nor a random number are kept (evaluation/purity.ts):
 * those are a function of the data and the context alone. A write moves the revision, so
 * older entries are never served; they age out.
 */
import { BoundedMap } from '../../lib/bounded-map';

export interface FrontendAnswer {
  /** UTF-8 JSON. */
  body: Uint8Array;
  etag: string;
  /** Served again and again (frontend-api/answer.ts): its response headers are kept with it. */
  kept?: true;
}

// Bounded by count and by characters held (an isolate has 128 MB).
const MAX_CHARS = 4_000_000;
const answers = new BoundedMap<string, FrontendAnswer>(
  { entries: 512, weight: MAX_CHARS },
  { weight: (key, answer) => key.length + answer.body.byteLength },
);

/** `contextKey` must name one context: its JSON, or the raw input it is built from. */
export function answerKey(environment: string, revision: number, projects: readonly string[], contextKey: string): string {
  return `${environment}\u0000${revision}\u0000${scopeOf(projects)}\u0000${contextKey}`;
}

// A token's project list is one array for as long as its record is kept: its scope text is
// made once, not on every request.
const scopes = new WeakMap<readonly string[], string>();

function scopeOf(projects: readonly string[]): string {
  let scope = scopes.get(projects);
  if (scope === undefined) {
    scope = projects.includes('*') ? '*' : [...projects].sort().join(',');
    scopes.set(projects, scope);
  }
  return scope;
}

export function cachedAnswer(key: string): FrontendAnswer | undefined {
  return answers.get(key);
}

export function rememberAnswer(key: string, answer: FrontendAnswer): void {
  if (key.length + answer.body.byteLength > MAX_CHARS / 8 || answers.has(key)) return;
  answers.set(key, answer);
}
