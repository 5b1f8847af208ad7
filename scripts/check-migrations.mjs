// `npm run check:migrations`: fails when `drizzle-kit generate` would write a migration, that
// is when src/db/schema.ts has changes that migrations/ does not have (or drizzle's journal and
// snapshots in migrations/meta fell behind hand-written SQL). drizzle-kit runs on a temporary
// copy of migrations/, so nothing is written to the project.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import config from '../drizzle.config.ts';

/** Every file under `dir` (relative path -> content). */
function files(dir, prefix = '') {
  const result = new Map();
  for (const entry of readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const name = path.join(prefix, entry.name);
    if (entry.isDirectory()) for (const [file, content] of files(dir, name)) result.set(file, content);
    else result.set(name, readFileSync(path.join(dir, name), 'utf8'));
  }
  return result;
}

const dir = mkdtempSync(path.join(tmpdir(), 'check-migrations-'));
try {
  const copy = path.join(dir, 'migrations');
  cpSync(config.out, copy, { recursive: true });
  const before = files(copy);
  const drizzleKit = path.join('node_modules', '.bin', process.platform === 'win32' ? 'drizzle-kit.cmd' : 'drizzle-kit');
  // drizzle-kit reads --out relative to the working directory (an absolute one is not found).
  const args = ['generate', `--dialect=${config.dialect}`, `--schema=${config.schema}`, `--out=${path.relative(process.cwd(), copy)}`];
  const result = spawnSync(drizzleKit, args, { encoding: 'utf8', shell: process.platform === 'win32' });
  if (result.status !== 0) {
    process.stderr.write(`${result.stdout ?? ''}${result.stderr ?? ''}`);
    throw new Error(`drizzle-kit generate failed (exit ${result.status ?? result.signal})`);
  }
  const written = [...files(copy)].filter(([file, content]) => before.get(file) !== content);
  if (written.length > 0) {
    console.error(`drizzle-kit generate would write ${written.map(([file]) => path.join(config.out, file)).join(', ')}:`);
    for (const [file, content] of written) if (file.endsWith('.sql')) console.error(`\n${content}\n`);
    console.error('src/db/schema.ts and migrations/ disagree: run `npm run db:generate` and commit the migration it writes.');
    process.exitCode = 1;
  } else {
    console.log('migrations/ has every change of src/db/schema.ts (drizzle-kit generate writes nothing)');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
