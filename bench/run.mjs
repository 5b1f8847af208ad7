// `npm run bench [-- <area> ...]`: runs bench/<area>/run.mjs for each area (all by default).
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './lib.mjs';

const available = readdirSync(path.join(ROOT, 'bench'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(path.join(ROOT, 'bench', entry.name, 'run.mjs')))
  .map((entry) => entry.name)
  .sort();
// Areas first; options from the first `--…` on are the areas' own (e.g. `sdk --against <commit>`).
const args = process.argv.slice(2);
const firstOption = args.findIndex((arg) => arg.startsWith('--'));
const areas = firstOption < 0 ? args : args.slice(0, firstOption);
const wanted = areas.length > 0 ? areas : available;
for (const area of wanted) {
  if (!available.includes(area)) {
    console.error(`unknown bench area "${area}"; available: ${available.join(', ')}`);
    process.exit(2);
  }
  console.log(`\n## bench/${area}\n`);
  await import(path.join(ROOT, 'bench', area, 'run.mjs'));
}
