// `npm run check:architecture`: fails when the module rules of docs/architecture.md do not hold.
//
//   1. No route file touches D1: a `routes.ts` (or a file under a `routes/` folder) imports
//      neither drizzle-orm nor the tables of src/db/schema.ts (a type is fine) and never reads
//      `env.DB`; it hands `getDb(env)` to its service or store, which query.
//   2. No module imports another module's store: cross-module reads go through src/db/lookups.ts
//      (the shared read-model) or the other module's service.
//   3. No import cycles: neither between files (runtime or type imports) nor between module
//      folders (src/<wing>/<module>).
//
// Imports are read with the TypeScript parser, so comments and strings never count.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(import.meta.dirname, '..');
const SRC = path.join(ROOT, 'src');
/** The folders that hold modules, one folder per module. */
const WINGS = new Set(['sdk', 'admin', 'identity', 'integrations']);
/** The other ways in beside the service's router: each folder is one module that reuses the SDK wing. */
const WAYS_IN = new Set(['edge', 'binding']);
/** Generated: no imports worth checking. */
const SKIPPED = new Set(['src/worker-configuration.d.ts']);

/**
 * Findings known and accepted until the re-cut of the flag module (issue 37, branch `recut`)
 * merges: they are in files that branch rewrites (src/admin/features/, src/admin/project-features/,
 * src/admin/import-export/rules.ts). Each entry is the exact text the check prints; remove the
 * entries at the merge, and the check must still pass.
 */
const ALLOWED = new Set([]);

function sourceFiles(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sourceFiles(full));
    else if (entry.name.endsWith('.ts')) found.push(full);
  }
  return found;
}

const rel = (file) => path.relative(ROOT, file).split(path.sep).join('/');

/** The module a file belongs to: `admin/segments`, `auth`, or `src/app.ts` for a file at the top. */
function moduleOf(file) {
  const parts = rel(file).split('/').slice(1);
  if (parts.length === 1) return rel(file);
  if (WAYS_IN.has(parts[0])) return parts[0];
  if (WINGS.has(parts[0]) && parts.length > 2) return `${parts[0]}/${parts[1]}`;
  return parts[0];
}

const isModule = (module) => WAYS_IN.has(module) || (WINGS.has(module.split('/')[0]) && module.includes('/'));
/** The entry points: they list the modules, so they import them all. */
const ENTRIES = new Set(['src/app.ts', 'src/index.ts', 'src/scheduled.ts', 'src/direct-routes.ts']);
/** A module's store: its `store.ts`, or any file under a `store/` folder. */
const isStore = (file) => /\/store(\.ts|\/)/.test(rel(file));
const isRouteFile = (file) => /\/routes\.ts$|\/routes\//.test(rel(file));

function resolveImport(from, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, path.join(base, 'index.ts')]) {
    if (files.has(candidate)) return candidate;
  }
  return undefined;
}

/** Every import and re-export of a file: its target (resolved or a package) and whether only types come in. */
function importsOf(file, text) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found = [];
  const add = (node, specifier, typeOnly) => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    found.push({ specifier, target: resolveImport(file, specifier), typeOnly, line });
  };
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const clause = statement.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((element) => element.isTypeOnly)));
      add(statement, statement.moduleSpecifier.text, typeOnly);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
      add(statement, statement.moduleSpecifier.text, statement.isTypeOnly);
    }
  }
  const visit = (node) => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteral(argument)) add(node, argument.text, false);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const files = new Set(sourceFiles(SRC).filter((file) => !SKIPPED.has(rel(file))));
const graph = new Map();
const findings = [];

for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const imports = importsOf(file, text);
  graph.set(file, imports);

  if (isRouteFile(file)) {
    for (const entry of imports) {
      if (entry.typeOnly) continue;
      if (entry.specifier === 'drizzle-orm' || entry.specifier.startsWith('drizzle-orm/'))
        findings.push(`route touches D1: ${rel(file)} imports ${entry.specifier}`);
      if (entry.target !== undefined && rel(entry.target) === 'src/db/schema.ts')
        findings.push(`route touches D1: ${rel(file)} imports the tables of src/db/schema.ts`);
    }
    if (/\benv\.DB\b/.test(text)) findings.push(`route touches D1: ${rel(file)} reads env.DB`);
  }

  for (const entry of imports) {
    if (entry.target === undefined || !isStore(entry.target)) continue;
    const from = moduleOf(file);
    const to = moduleOf(entry.target);
    if (from !== to) findings.push(`cross-module store import: ${rel(file)} (${from}) imports ${rel(entry.target)}`);
  }
}

/** Strongly connected components of more than one node (Tarjan), each sorted. */
function cycles(nodes, edgesOf) {
  let index = 0;
  const indexOf = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  const connect = (node) => {
    indexOf.set(node, index);
    low.set(node, index);
    index++;
    stack.push(node);
    onStack.add(node);
    for (const next of edgesOf(node)) {
      if (!indexOf.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), indexOf.get(next)));
    }
    if (low.get(node) === indexOf.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of [...nodes].sort()) if (!indexOf.has(node)) connect(node);
  return components;
}

const fileEdges = (file) => [...new Set(graph.get(file).flatMap((entry) => (entry.target ? [entry.target] : [])))];
for (const component of cycles(files, fileEdges)) findings.push(`file cycle: ${component.map(rel).join(' <-> ')}`);

// Cross-cutting folders (src/auth, src/http, src/db, …) should depend on no module (the modules
// depend on them). Not yet enforced: reported as warnings, each a known debt (see the list in
// docs/architecture.md).
const warnings = [];
for (const file of files) {
  const from = moduleOf(file);
  if (isModule(from) || ENTRIES.has(rel(file))) continue;
  for (const entry of graph.get(file)) {
    if (entry.typeOnly || entry.target === undefined || !isModule(moduleOf(entry.target))) continue;
    warnings.push(`cross-cutting code imports a module: ${rel(file)} imports ${rel(entry.target)}`);
  }
}

const moduleEdges = new Map();
/** One import behind each edge between modules, to say where a module cycle comes from. */
const evidence = new Map();
for (const file of files) {
  const from = moduleOf(file);
  if (!isModule(from)) continue;
  if (!moduleEdges.has(from)) moduleEdges.set(from, new Set());
  for (const target of fileEdges(file)) {
    const to = moduleOf(target);
    if (to === from || !isModule(to)) continue;
    moduleEdges.get(from).add(to);
    if (!evidence.has(`${from} -> ${to}`)) evidence.set(`${from} -> ${to}`, `${rel(file)} imports ${rel(target)}`);
  }
}
for (const component of cycles(moduleEdges.keys(), (module) => [...(moduleEdges.get(module) ?? [])])) {
  findings.push(`module cycle: ${component.join(' <-> ')}`);
  if (process.argv.includes('--explain')) {
    for (const from of component)
      for (const to of moduleEdges.get(from))
        if (component.includes(to)) console.error(`  ${from} -> ${to}: ${evidence.get(`${from} -> ${to}`)}`);
  }
}

const unexpected = findings.filter((finding) => !ALLOWED.has(finding));
const allowed = findings.filter((finding) => ALLOWED.has(finding));
const stale = [...ALLOWED].filter((entry) => !findings.includes(entry));
for (const warning of warnings) console.log(`warning: ${warning}`);
for (const finding of allowed) console.log(`allowed until the flag re-cut merges: ${finding}`);
for (const entry of stale) console.error(`stale allow-list entry (remove it): ${entry}`);
for (const finding of unexpected) console.error(finding);
if (unexpected.length > 0 || stale.length > 0) process.exit(1);
console.log(`architecture: ${files.size} files, ${moduleEdges.size} modules; no route touches D1, no cross-module store import, no cycle`);
