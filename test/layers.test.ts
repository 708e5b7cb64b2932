// The direction of imports in src/ (docs/architecture.md, Layout): the root
// assembles the areas, the areas use the HTTP kit and the platform, and
// everything rests on db, the context and the base. A file may import its own
// folder, a lower layer or a module of its own layer (areas use each other),
// never a higher one, and no import may close a circle, between files or
// between folders. `import type` counts too: a type dependency is a
// dependency. A new folder must be given a layer here.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const SRC = path.resolve(import.meta.dirname, '../src');

/** Lowest first; a layer may import only the layers before it. */
const LAYERS: [layer: string, members: string[]][] = [
  ['base', ['errors.ts', 'error-catalogue.ts', 'config.ts', 'lazy.ts', 'secrets.ts', 'outbound']],
  ['db', ['db']],
  ['context', ['context.ts', 'periodic.ts', 'cache.ts']],
  ['platform', ['platform']],
  ['http', ['http']],
  [
    'areas',
    ['auth', 'rest', 'storage', 'functions', 'workflows', 'cron', 'realtime', 'queues', 'studio', 'management'],
  ],
  ['root', ['server']],
  ['cli', ['cli']],
];

/** The module a file belongs to: its folder under src/, or the file itself at the top. */
const moduleOf = (rel: string) => rel.split('/')[0]!;

function layerOf(rel: string): number {
  const i = LAYERS.findIndex(([, members]) => members.includes(moduleOf(rel)));
  if (i < 0)
    throw new Error(
      `src/${rel} is in no layer: give ${moduleOf(rel)} one in test/layers.test.ts and docs/architecture.md`,
    );
  return i;
}

/** Why an import from one src file to another breaks the layering, or null when it does not. */
export function refusal(from: string, to: string): string | null {
  if (moduleOf(from) === moduleOf(to)) return null;
  const a = layerOf(from);
  const b = layerOf(to);
  return b <= a ? null : `${LAYERS[a]![0]} imports ${LAYERS[b]![0]}`;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return /\.(ts|js)$/.test(name) && !name.endsWith('.d.ts') ? [p] : [];
  });
}

/** A module's import specifiers: static, dynamic, type-only, re-exports, `import('...')` types. */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      out.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      out.push(node.arguments[0].text);
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      out.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** Every relative import of every src file, as paths under src/. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const imports = importsOf(file)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) =>
        path
          .relative(SRC, path.resolve(path.dirname(file), spec))
          .split(path.sep)
          .join('/'),
      )
      .filter((to) => !to.startsWith('..')); // e.g. scripts/postgres-patch.json: outside src, no layer
    graph.set(path.relative(SRC, file).split(path.sep).join('/'), imports);
  }
  return graph;
}

/** The strongly connected components with more than one member (Tarjan), i.e. the import circles. */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

test('the rule refuses upward imports and allows downward ones', () => {
  assert.match(refusal('auth/http.ts', 'server/app.ts')!, /areas imports root/);
  assert.match(refusal('platform/project-config.ts', 'rest/settings.ts')!, /platform imports areas/);
  assert.match(refusal('db/pools.ts', 'platform/registry.ts')!, /db imports platform/);
  assert.match(refusal('http/credentials.ts', 'auth/sessions.ts')!, /http imports areas/);
  assert.match(refusal('server/app.ts', 'cli/main.ts')!, /root imports cli/);
  assert.equal(refusal('server/app.ts', 'auth/routes.ts'), null);
  assert.equal(refusal('cron/deliver.ts', 'workflows/runs.ts'), null);
  assert.equal(refusal('platform/registry.ts', 'db/pools.ts'), null);
  assert.throws(() => refusal('nowhere/x.ts', 'errors.ts'), /in no layer/);
});

test('the circle finder finds a circle through three files', () => {
  const graph = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a']],
    ['d', ['a']],
  ]);
  assert.deepEqual(circles(graph), [['a', 'b', 'c']]);
});

test('every import in src/ points down the layers', () => {
  const graph = importGraph();
  assert.ok(graph.size > 100, `read ${graph.size} files`);
  const wrong = [...graph].flatMap(([from, imports]) =>
    imports.flatMap((to) => {
      const why = refusal(from, to);
      return why ? [`src/${from} -> src/${to} (${why})`] : [];
    }),
  );
  assert.deepEqual(wrong, []);
});

test('no import circle between files or between folders', () => {
  const graph = importGraph();
  assert.deepEqual(circles(graph), []);
  const byModule = new Map<string, string[]>();
  for (const [from, imports] of graph) {
    const edges = byModule.get(moduleOf(from)) ?? [];
    for (const to of imports) if (moduleOf(to) !== moduleOf(from)) edges.push(moduleOf(to));
    byModule.set(moduleOf(from), edges);
  }
  assert.deepEqual(circles(byModule), []);
});
