// Measures the V8 heap the import pipeline holds (parse -> validate -> analyse -> chunks), in
// Node, with a stand-in for D1 that answers the lookups of an empty database:
//   PATH=node_modules/.bin:$PATH node --expose-gc --import tsx bench/import/memory.ts 25000
import * as v from 'valibot';
// @ts-expect-error plain ESM module without types
import { generate } from './generate.mjs';
import { ImportSchema } from '../../src/modules/import-export/schema';
import { analyseImport } from '../../src/modules/import-export/service';
import { toChunks } from '../../src/modules/import-export/plan';
const n = Number(process.argv[2]);
const fakeD1 = {
  prepare(sql: string) {
    const rows = sql.includes('FROM projects') ? [{ id: 'default', archived_at: null, default_stickiness: 'default', feature_limit: null }]
      : sql.includes('FROM environments') ? [{ name: 'development' }]
      : sql.includes('FROM project_environments') ? [{ default_strategy: null }]
      : sql.includes('FROM strategies') ? [{ name: 'default', built_in: 1 }, { name: 'flexibleRollout', built_in: 1 }]
      : sql.includes('FROM tag_types') ? [{ name: 'simple' }] : [];
    return { bind() { return { rows }; } };
  },
  async batch(statements: { rows: unknown[] }[]) { return statements.map((s) => ({ results: s.rows })); },
};
let bytes: Uint8Array | null = new TextEncoder().encode(JSON.stringify(generate(n, 1)));
const size = bytes.length;
const gc = (globalThis as unknown as { gc: () => void }).gc;
gc(); const base = process.memoryUsage().heapUsed;
const mb = (x: number) => ((x - base) / 1e6).toFixed(0);
const t0 = performance.now();
let parsed: unknown = JSON.parse(new TextDecoder().decode(bytes)); bytes = null;
gc(); const m1 = process.memoryUsage().heapUsed; const t1 = performance.now();
const body = v.parse(ImportSchema, parsed); parsed = null;
gc(); const m2 = process.memoryUsage().heapUsed; const t2 = performance.now();
const analysis = await analyseImport(fakeD1 as unknown as D1Database, { permissions: new Set(['ADMIN']) }, body);
gc(); const m3 = process.memoryUsage().heapUsed; const t3 = performance.now();
const { chunks } = toChunks(analysis.prepared);
const first = JSON.stringify(chunks[0]);
gc(); const m4 = process.memoryUsage().heapUsed; const t4 = performance.now();
console.log(JSON.stringify({ n, bodyMB: (size / 1e6).toFixed(1), heapMB: { parsed: mb(m1), validated: mb(m2), analysed: mb(m3), chunked: mb(m4) },
  ms: { parse: Math.round(t1 - t0), validate: Math.round(t2 - t1), analyse: Math.round(t3 - t2), chunk: Math.round(t4 - t3) }, errors: analysis.errors.length, chunks: chunks.length, chunkMB: (first.length / 1e6).toFixed(2) }));
