// Another commit built beside the working tree, for benchmarks that measure both in one run
// (`--against <commit>`): a `git worktree add` of that commit in a temporary directory, with a
// hard-linked copy of this checkout's node_modules when the commit has the same runtime
// dependencies and wrangler (else its own `npm ci`), and of the admin UI build. `remove()`
// takes it away again (the worktree too).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './lib.mjs';

/** The `--against <commit>` of this process's arguments, or undefined. */
export function againstArgument(argv = process.argv) {
  const index = argv.indexOf('--against');
  if (index < 0) return undefined;
  const commit = argv[index + 1];
  if (!commit || commit.startsWith('--')) throw new Error('--against needs a commit');
  return commit;
}

/**
 * Whether this checkout's node_modules builds `root` as its own `npm ci` would: the same
 * runtime dependencies (what the bundle holds) and the same wrangler (what bundles and serves).
 * Other dev tools (linters, test runners) do not enter the figures.
 */
function sameBundleInputs(root) {
  const manifest = (dir) => JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const inputs = (pkg) => JSON.stringify([pkg.dependencies ?? {}, pkg.devDependencies?.wrangler, pkg.devDependencies?.miniflare]);
  return inputs(manifest(ROOT)) === inputs(manifest(root));
}

/** Checks out and prepares `commit`; answers `{ root, commit (full hash), label, remove() }`. */
export function checkoutAgainst(commit) {
  const full = execFileSync('git', ['-C', ROOT, 'rev-parse', '--verify', `${commit}^{commit}`], { encoding: 'utf8' }).trim();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'unleash-bench-against-'));
  const root = path.join(dir, 'src');
  execFileSync('git', ['-C', ROOT, 'worktree', 'add', '--detach', root, full], { stdio: 'ignore' });
  const remove = () => {
    try {
      execFileSync('git', ['-C', ROOT, 'worktree', 'remove', '--force', root], { stdio: 'ignore' });
    } catch {
      // removed below
    }
    rmSync(dir, { recursive: true, force: true });
    execFileSync('git', ['-C', ROOT, 'worktree', 'prune'], { stdio: 'ignore' });
  };
  try {
    if (sameBundleInputs(root)) execFileSync('cp', ['-al', path.join(ROOT, 'node_modules'), path.join(root, 'node_modules')]);
    else execFileSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: root, stdio: 'ignore' });
    if (existsSync(path.join(ROOT, 'ui-build'))) execFileSync('cp', ['-al', path.join(ROOT, 'ui-build'), path.join(root, 'ui-build')]);
  } catch (error) {
    remove();
    throw error;
  }
  return { root, commit: full, label: full.slice(0, 7), remove };
}
