/**
 * Every route the Worker declares is reached: the asset layer answers any path that
 * wrangler.toml's `run_worker_first` does not give the Worker with the UI's index.html (the
 * 8.2.0 parity sweep found `GET /ready` answered that way, 200 text/html).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../src/routes';

/** The top-level `run_worker_first` list of wrangler.toml (Edge mode's is `true`). */
function workerFirst(): string[] {
  const toml = readFileSync('wrangler.toml', 'utf8'); /* vitest runs from the project root */
  const line = toml.split('\n').find((text) => text.startsWith('run_worker_first = ['));
  if (line === undefined) throw new Error('wrangler.toml has no run_worker_first list');
  return [...line.matchAll(/"([^"]+)"/g)].map((match) => match[1]!);
}

/** A `run_worker_first` pattern as a regular expression (`*` is any rest of the path). */
function patternOf(glob: string): RegExp {
  const escaped = glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${escaped}$`);
}

describe('run_worker_first', () => {
  it('covers the path of every declared route', () => {
    const patterns = workerFirst().map(patternOf);
    const missed = ROUTES.map((route) => route.path.replace(/:\w+/g, 'x')).filter(
      (path) => !patterns.some((pattern) => pattern.test(path)),
    );
    expect(missed).toEqual([]);
  });

  it("gives wrangler dev's /__scheduled to the Worker, where --test-scheduled runs the cron on it", () => {
    // Outside the list the asset layer answered it with index.html (200) and the cron never ran.
    expect(
      workerFirst()
        .map(patternOf)
        .some((pattern) => pattern.test('/__scheduled')),
    ).toBe(true);
  });

  it('would notice a route outside it', () => {
    const patterns = workerFirst().map(patternOf);
    expect(patterns.some((pattern) => pattern.test('/ready-not-routed'))).toBe(false);
    expect(patterns.some((pattern) => pattern.test('/api/admin/features'))).toBe(true);
  });
});
