// `npm run bench [-- <area> ...]`: runs bench/<area>/run.mjs for each area (all by default).
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './lib.mjs';

const available = readdirSync(path.join(ROOT, 'bench'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(path.join(ROOT, 'bench', entry.name, 'run.mjs')))
  .map((entry) => entry.name)
  .sort();
const wanted = process.argv.slice(2).length > 0 ? process.argv.slice(2) : available;
for (const area of wanted) {
  if (!available.includes(area)) {
    console.error(`unknown bench area "${area}"; available: ${available.join(', ')}`);
    process.exit(2);
  }
  console.log(`\n## bench/${area}\n`);
  await import(path.join(ROOT, 'bench', area, 'run.mjs'));
}
