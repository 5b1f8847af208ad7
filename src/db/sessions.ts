/**
 * D1 read replication through the Sessions API. Each request gets its own `env.DB`: a D1
 * session chosen by what the request does, wrapped so that it is still a `D1Database` and
 * `getDb(env)` works everywhere unchanged.
 *
 * - Writes (any method but GET/HEAD/OPTIONS) start at the primary (`first-primary`) and answer
 *   with the session's bookmark in `x-d1-bookmark`.
 * - SDK reads (`/api/client`, `/api/frontend`) and feature search start at the nearest
 *   replica (`first-unconstrained`).
 * - A request that sends `x-d1-bookmark` back reads at least that bookmark's state (its own
 *   writes), whatever it is. Other admin reads go to the primary, as before.
 * - Reads in an isolate that has written start at least at its latest write's bookmark, so the
 *   writing isolate reads its own writes on replicas too (see db/revision.ts).
 */
import type { Env } from '../env';
import { urlOf } from '../http/request-url';
import { demandRevisionCheck, noteLocalWrite } from './coherence';

export const BOOKMARK_HEADER = 'x-d1-bookmark';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const SDK_PATHS = ['/api/client/', '/api/frontend'];
const REPLICA_PATHS = [...SDK_PATHS, '/api/admin/search/'];
// D1 bookmarks are dash-separated hex; anything else is ignored rather than sent to D1.
const BOOKMARK = /^[0-9a-f]{1,32}(?:-[0-9a-f]{1,64}){0,8}$/i;

/** The newest bookmark this isolate's own writes returned. */
let latestLocalBookmark: string | null = null;

/** D1 bookmarks sort lexicographically in commit order. */
function newest(first: string | null, second: string | null): string | null {
  if (first === null) return second;
  if (second === null) return first;
  return first > second ? first : second;
}

function sentBookmark(request: Request): string | null {
  const header = request.headers.get(BOOKMARK_HEADER);
  if (header === null) return null;
  const value = header.trim();
  return value.length <= 400 && BOOKMARK.test(value) ? value : null;
}

/**
 * A session that still looks like the database: statements go through the session, which is
 * opened on the first statement (most SDK requests are answered from the isolate and never
 * reach D1, so they never pay for one).
 */
function asDatabase(primary: D1Database, start: string): { database: D1Database; bookmark(): string | null } {
  let session: D1DatabaseSession | undefined;
  const open = () => (session ??= primary.withSession(start));
  const database = {
    prepare: (query: string) => open().prepare(query),
    batch: <T>(statements: D1PreparedStatement[]) => open().batch<T>(statements),
    exec: (query: string) => primary.exec(query),
    dump: () => primary.dump(),
    withSession: (constraintOrBookmark?: string) => primary.withSession(constraintOrBookmark),
  } as D1Database;
  return { database, bookmark: () => session?.getBookmark() ?? null };
}

export interface RequestDatabase {
  env: Env;
  /** Adds the bookmark of a write to its response. */
  finish(response: Response): Response;
}

export function withD1Session(env: Env, request: Request): RequestDatabase {
  const primary = env.DB;
  if (typeof primary.withSession !== 'function') return { env, finish: (response) => response };
  const sent = sentBookmark(request);
  const path = urlOf(request).pathname;
  const isWrite = !READ_METHODS.has(request.method);
  let start: string | null;
  if (isWrite) start = sent ?? 'first-primary';
  else if (REPLICA_PATHS.some((prefix) => path.startsWith(prefix))) {
    start = newest(sent, latestLocalBookmark) ?? 'first-unconstrained';
    // The SDK side answers from the revision it knows until its tick; a bookmark asks for a
    // state that may be newer than that, so it re-reads the revision in this session.
    if (sent !== null) demandRevisionCheck();
  } else start = sent;
  if (start === null) return { env, finish: (response) => response };

  const session = asDatabase(primary, start);
  return {
    env: { ...env, DB: session.database },
    finish(response) {
      if (!isWrite) return response;
      const bookmark = session.bookmark();
      if (bookmark === null) return response;
      latestLocalBookmark = newest(latestLocalBookmark, bookmark);
      // An SDK read between the write and this point started before the bookmark was known:
      // count the write again so the next SDK request re-checks from the new bookmark. SDK
      // posts (metrics, registration, frontend evaluation) change no flag, so they do not.
      if (!SDK_PATHS.some((prefix) => path.startsWith(prefix))) noteLocalWrite();
      const headers = new Headers(response.headers);
      headers.set(BOOKMARK_HEADER, bookmark);
      return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
    },
  };
}
