// Times each statement of an import's chunks in node:sqlite (the SQL the Worker sends to D1):
//   PATH=node_modules/.bin:$PATH node --import tsx bench/import/sql-profile.ts 5000
import { DatabaseSync } from 'node:sqlite';
import { readFileSync } from 'node:fs';
import * as v from 'valibot';
// @ts-expect-error plain ESM module without types
import { generate } from './generate.mjs';
import { ImportSchema } from '../../src/modules/import-export/schema';
import { analyseImport } from '../../src/modules/import-export/service';
import { toChunks } from '../../src/modules/import-export/plan';
import { chunkStatements } from '../../src/modules/import-export/store';
const db = new DatabaseSync(':memory:');
db.exec('PRAGMA foreign_keys = ON');
for (const f of ['0000_init.sql', '0001_seed.sql']) db.exec(readFileSync(`migrations/${f}`, 'utf8').replaceAll('--> statement-breakpoint', ''));
// A D1 look-alike over node:sqlite: enough for analyseImport and chunkStatements.
const fake = {
  prepare(sqlText: string) {
    return { sqlText, params: [] as unknown[], bind(...params: unknown[]) { return { ...this, params }; } };
  },
  async batch(statements: { sqlText: string; params: unknown[] }[]) {
    return statements.map((s) => ({ results: db.prepare(s.sqlText).all(...(s.params as never[])) }));
  },
};
for (const round of [1, 2]) {
  const body = v.parse(ImportSchema, JSON.parse(JSON.stringify(generate(Number(process.argv[2] ?? 2000), round))));
  const analysis = await analyseImport(fake as unknown as D1Database, { permissions: new Set(['ADMIN']) }, body);
  const { chunks } = toChunks(analysis.prepared);
  const totals: number[] = [];
  for (const chunk of chunks) {
    const statements = chunkStatements(fake as unknown as D1Database, analysis.target, { userId: -42, now: new Date().toISOString() }, { chunk }) as unknown as { sqlText: string; params: unknown[] }[];
    db.exec('BEGIN');
    statements.forEach((s, i) => {
      const t = performance.now();
      db.prepare(s.sqlText).run(...(s.params as never[]));
      totals[i] = (totals[i] ?? 0) + performance.now() - t;
    });
    db.exec('COMMIT');
  }
  const stmts = chunkStatements(fake as unknown as D1Database, analysis.target, { userId: -42, now: '' }, { chunk: chunks[0]! }) as unknown as { sqlText: string }[];
  console.log(`round ${round}: ${chunks.length} chunks`);
  totals.forEach((ms, i) => console.log(ms.toFixed(0).padStart(6), 'ms', stmts[i]!.sqlText.replace(/\s+/g, ' ').slice(0, 90)));
}
