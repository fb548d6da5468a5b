/**
 * The rooms of src/ and the direction imports may go (BRIEF "Code we want to live in"): lower rooms
 * never import higher ones, ports.ts imports nothing, no module imports itself round a circle. Read
 * from the source with TypeScript's parser: every import and re-export, static or dynamic.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');

interface Edge {
  from: string;
  to: string;
  /** `import type`, or every name imported is `type`: gone once compiled. */
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const file = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(file);
    return e.name.endsWith('.ts') ? [file] : [];
  });
}

/** Every import of a module of src/ in `file` (packages, node: and JSON files are left out). */
function importsOf(file: string): Edge[] {
  const from = path.relative(SRC, file);
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const edges: Edge[] = [];
  const add = (specifier: ts.Node | undefined, typeOnly: boolean) => {
    if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) return;
    const target = path.resolve(path.dirname(file), specifier.text.replace(/\.js$/, '.ts'));
    if (target.endsWith('.ts')) edges.push({ from, to: path.relative(SRC, target), typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const allTypes = !!clause && !clause.name && !!named && named.length > 0 && named.every((n) => n.isTypeOnly);
      add(node.moduleSpecifier, !!clause?.isTypeOnly || allTypes);
    } else if (ts.isExportDeclaration(node)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      add(node.moduleSpecifier, node.isTypeOnly || (!!named && named.length > 0 && named.every((n) => n.isTypeOnly)));
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return edges;
}

/** A module's room: its folder under src/ (`memory/`), or the file itself for one at the top (`ports.ts`). */
const roomOf = (module: string) => (module.includes('/') ? `${module.split('/')[0]}/` : module);

/**
 * The lowest rooms and all they may import besides themselves (ports.ts is judged on its own,
 * below). memory/ (the backends, the snapshot store) knows Recall's own files only through ports;
 * secrets/ is what every room that handles a secret knows of its forms.
 */
const BELOW: Record<string, readonly string[]> = {
  'errors.ts': [],
  'secrets/': [],
  'git/': ['errors.ts', 'ports.ts', 'secrets/'],
  'memory/': ['git/', 'errors.ts', 'ports.ts', 'secrets/'],
};

/**
 * What ports.ts still imports, all types of recall/'s records and queries, which the ports speak
 * of. Known, and not to grow: a new import of ports.ts fails below, and so does one of these gone
 * (take it off the list).
 */
const PORTS_TYPE_IMPORTS = ['recall/card.ts', 'recall/citations.ts', 'recall/memory-index.ts', 'recall/records.ts', 'recall/search.ts'];

/** The circles of value imports among `edges`' modules (Tarjan's strongly connected components). */
function circles(edges: Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) if (!e.typeOnly) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const connect = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (next.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) connect(v);
  return found;
}

const edges = sourceFiles(SRC).flatMap(importsOf);
const show = (e: Edge) => `${e.from} imports ${e.typeOnly ? 'types of ' : ''}${e.to}`;

describe('layers of src/', () => {
  it('reads the imports it judges (a check that sees none would pass anything)', () => {
    expect(edges.filter((e) => e.from === 'memory/snapshot-store.ts').map((e) => e.to)).toContain('memory/store-check.ts');
    expect(edges.find((e) => e.from === 'memory/factory.ts' && e.to === 'ports.ts')?.typeOnly).toBe(true);
    expect(circles([
      { from: 'a.ts', to: 'b.ts', typeOnly: false },
      { from: 'b.ts', to: 'a.ts', typeOnly: false },
      { from: 'b.ts', to: 'c.ts', typeOnly: true },
      { from: 'c.ts', to: 'b.ts', typeOnly: false },
    ])).toEqual([['a.ts', 'b.ts']]);
  });

  it('the lowest rooms (memory/, git/, secrets/, errors.ts) import only what lies below them, types included', () => {
    const upward = edges.filter((e) => {
      const from = roomOf(e.from);
      const to = roomOf(e.to);
      return from in BELOW && from !== to && !BELOW[from]!.includes(to);
    });
    expect(upward.map(show)).toEqual([]);
  });

  it('ports.ts imports no value, and no type but the known ones', () => {
    const ports = edges.filter((e) => e.from === 'ports.ts');
    expect(ports.filter((e) => !e.typeOnly).map(show)).toEqual([]);
    expect([...new Set(ports.map((e) => e.to))].sort()).toEqual(PORTS_TYPE_IMPORTS);
  });

  it('no module imports itself round a circle of value imports', () => {
    expect(circles(edges)).toEqual([]);
  });
});
