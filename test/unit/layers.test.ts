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

/** A module's room: its folder under src/ (`memory/`; agent/tools/ is agent/'s), or the file itself for one at the top (`ports.ts`). */
const roomOf = (module: string) => (module.includes('/') ? `${module.split('/')[0]}/` : module);

/**
 * The floors of src/, top to bottom (RFC-001, "The rooms and their floors"): a room imports only
 * rooms on lower floors, types included, and rooms on one floor do not import each other (they
 * talk through ports.ts, or the room above hands a value down). A new room must be placed here.
 */
const FLOORS: ReadonlyArray<readonly string[]> = [
  ['bundle.ts'],
  ['index.ts', 'index-post.ts'],
  ['main.ts', 'post.ts', 'cli/'],
  ['action/'],
  ['pipeline.ts'],
  ['run.ts', 'inputs.ts', 'state.ts'],
  ['cards/', 'forget/', 'import/', 'publish/'],
  ['github/'],
  ['report/'],
  ['recall/', 'agent/'],
  ['provider/'],
  ['memory/'],
  ['git/'],
  ['errors.ts', 'secrets/', 'fence/'],
  ['ports.ts'],
];
const floorOf = new Map(FLOORS.flatMap((rooms, floor) => rooms.map((room) => [room, floor] as const)));

/** The imports among `edges` that do not point to a lower floor (`floors`: room -> floor, 0 at the top). */
function notDownward(edges: Edge[], floors: ReadonlyMap<string, number>): Edge[] {
  return edges.filter((e) => roomOf(e.from) !== roomOf(e.to) && !(floors.get(roomOf(e.to))! > floors.get(roomOf(e.from))!));
}

/** The circles of imports (types included) among `edges`' modules (Tarjan's strongly connected components). */
function circles(edges: Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
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
      { from: 'b.ts', to: 'c.ts', typeOnly: true },
      { from: 'c.ts', to: 'a.ts', typeOnly: false },
      { from: 'c.ts', to: 'd.ts', typeOnly: false },
    ])).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    const floors = new Map([['top.ts', 0], ['a/', 1], ['b/', 1], ['low.ts', 2]]);
    expect(notDownward([
      { from: 'top.ts', to: 'a/x.ts', typeOnly: false },
      { from: 'a/x.ts', to: 'a/y.ts', typeOnly: false },
      { from: 'a/x.ts', to: 'b/y.ts', typeOnly: true },
      { from: 'a/x.ts', to: 'low.ts', typeOnly: false },
      { from: 'low.ts', to: 'top.ts', typeOnly: true },
    ], floors).map(show)).toEqual(['a/x.ts imports types of b/y.ts', 'low.ts imports types of top.ts']);
  });

  it('every room of src/ is on a floor', () => {
    expect([...new Set(edges.flatMap((e) => [e.from, e.to]).map(roomOf))].filter((room) => !floorOf.has(room))).toEqual([]);
  });

  it('every import, types included, points to a room on a lower floor', () => {
    expect(notDownward(edges, floorOf).map(show)).toEqual([]);
  });

  it('ports.ts imports nothing', () => {
    expect(edges.filter((e) => e.from === 'ports.ts').map(show)).toEqual([]);
  });

  it('no module imports itself round a circle, types included', () => {
    expect(circles(edges)).toEqual([]);
  });

  it('no room, nor folder in a room (agent/tools/ in agent/), imports itself round a circle', () => {
    const folderOf = (module: string) => (module.includes('/') ? `${path.dirname(module)}/` : module);
    for (const of of [roomOf, folderOf]) {
      const between = edges.filter((e) => of(e.from) !== of(e.to)).map((e) => ({ ...e, from: of(e.from), to: of(e.to) }));
      expect(circles(between)).toEqual([]);
    }
  });
});
