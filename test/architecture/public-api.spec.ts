/*
 * The public API is curated: every package entry exports what a user writes, and every name it
 * exports has an entry in docs/API.md (and every name listed there is exported). A new export without a docs entry
 * fails here, and so does the root entry growing back towards a list of internals.
 *
 * Beyond API.md, every name README.md or docs/*.md says an entry exports is exported by that entry. A
 * doc says it two ways, read here outside code blocks: a code span followed by `from` and a backticked
 * entry (`` `provideLockTelemetry()` from `nestjs-distributed-lock` ``, in a table or in prose), and a
 * table with an `entry` column, whose row names the entry's exports in code spans of their own.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

const ROOT = path.resolve(__dirname, '..', '..');
const ENTRIES = {
  'nestjs-distributed-lock': 'lib/index.ts',
  'nestjs-distributed-lock/core': 'lib/core/public.ts',
  'nestjs-distributed-lock/testing': 'lib/testing/index.ts',
  'nestjs-distributed-lock/terminus': 'lib/terminus/index.ts',
  'nestjs-distributed-lock/observability': 'lib/observability/index.ts',
  'nestjs-distributed-lock/console': 'lib/console/index.ts',
  'nestjs-distributed-lock/fencing': 'lib/fencing/index.ts',
  'nestjs-distributed-lock/fencing/nest': 'lib/fencing/nest/index.ts',
};

function exportedNames(files: string[]): Map<string, string[]> {
  const options: ts.CompilerOptions = {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    skipLibCheck: true,
    noEmit: true,
  };
  const program = ts.createProgram(files, options);
  const checker = program.getTypeChecker();
  return new Map(
    files.map((file) => {
      const symbol = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
      return [
        file,
        checker
          .getExportsOfModule(symbol)
          .map((s) => s.name)
          .sort(),
      ];
    }),
  );
}

/**
 * The names docs/API.md lists in the tables of `entry`'s section (from its `## \`entry\`` heading to
 * the next such heading): the first cell of each row, when it is one backticked name.
 */
function documentedNames(docs: string, entry: string): string[] {
  const start = docs.indexOf(`## \`${entry}\``);
  if (start < 0) return [];
  const next = docs.indexOf('\n## ', start + 1);
  const section = docs.slice(start, next < 0 ? undefined : next);
  const listed: string[] = [];
  for (const line of section.split('\n')) {
    const first = /^\|\s*`([A-Za-z_$][\w$]*)`\s*\|/.exec(line);
    if (first) listed.push(first[1]!);
  }
  return listed;
}

const ENTRY = 'nestjs-distributed-lock(?:/[a-z]+)*';
/** `Name`, `Name()` or `name(args)`, then `from` and a backticked entry (across a line break too). */
const NAMED_FROM = new RegExp(`\`([A-Za-z_$][\\w$]*)(?:\\([^\`]*\\))?\`\\s+from\\s+\`(${ENTRY})\``, 'g');
const BARE_NAME = /^([A-Za-z_$][\w$]*)(?:\(\))?$/;

/** What README.md and docs/*.md say an entry exports: `{ name, entry, where }`, in document order. */
function namesDocsSayAreExported(): { name: string; entry: string; where: string }[] {
  const docs = [
    'README.md',
    ...fs
      .readdirSync(path.join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/${f}`),
  ];
  const said: { name: string; entry: string; where: string }[] = [];
  for (const doc of docs) {
    const lines = fs.readFileSync(path.join(ROOT, doc), 'utf8').split('\n');
    // Code blocks blanked (line numbers kept): their text is TypeScript, checked by the docs check.
    let fenced = false;
    const prose = lines.map((line) => {
      const fence = /^\s*```/.test(line);
      if (fence) fenced = !fenced;
      return fence || fenced ? '' : line;
    });
    const text = prose.join('\n');
    for (const match of text.matchAll(NAMED_FROM)) {
      const line = text.slice(0, match.index).split('\n').length;
      said.push({ name: match[1]!, entry: match[2]!, where: `${doc}:${line}` });
    }
    let entryColumn = -1;
    prose.forEach((line, i) => {
      if (!line.trimStart().startsWith('|')) {
        entryColumn = -1;
        return;
      }
      const cells = line
        .trim()
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim());
      const header = cells.indexOf('entry');
      if (header >= 0) {
        entryColumn = header;
        return;
      }
      const entry = new RegExp(`^\`(${ENTRY})\`$`).exec(cells[entryColumn] ?? '')?.[1];
      if (entryColumn < 0 || !entry) return;
      cells.forEach((cell, c) => {
        if (c === entryColumn) return;
        for (const span of cell.matchAll(/`([^`]+)`/g)) {
          const name = BARE_NAME.exec(span[1]!)?.[1];
          if (name) said.push({ name, entry, where: `${doc}:${i + 1}` });
        }
      });
    });
  }
  return said;
}

describe('the public API', () => {
  const files = Object.values(ENTRIES).map((f) => path.join(ROOT, f));
  const names = exportedNames(files);
  const docs = fs.readFileSync(path.join(ROOT, 'docs', 'API.md'), 'utf8');

  it.each(Object.entries(ENTRIES))('every name %s exports has an entry in docs/API.md', (_entry, file) => {
    const undocumented = names.get(path.join(ROOT, file))!.filter((name) => !docs.includes(`\`${name}\``));
    expect(undocumented).toEqual([]);
  });

  it.each(Object.entries(ENTRIES))('every name docs/API.md lists for %s is exported by it', (entry, file) => {
    const exported = new Set(names.get(path.join(ROOT, file)));
    const listed = documentedNames(docs, entry);
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.filter((name) => !exported.has(name))).toEqual([]);
  });

  it('the root entry stays a curated list (about 40 names), not the internals', () => {
    const root = names.get(path.join(ROOT, ENTRIES['nestjs-distributed-lock']))!;
    expect(root.length).toBeLessThanOrEqual(50);
    for (const internal of [
      'describe',
      'assertKnownNames',
      'prepareLockOptions',
      'withLockSignal',
      'KeySpace',
    ]) {
      expect(root).not.toContain(internal);
    }
  });

  const said = namesDocsSayAreExported();

  it('finds the names README.md and docs/*.md say an entry exports', () => {
    expect(said.length).toBeGreaterThanOrEqual(8);
    expect(said).toContainEqual(expect.objectContaining({ name: 'provideLockTelemetry' }));
  });

  it.each(said.map(({ name, entry, where }) => [name, entry, where]))(
    '%s is exported by %s, as %s says',
    (name, entry) => {
      const file = ENTRIES[entry as keyof typeof ENTRIES];
      expect(file).toBeDefined();
      expect(names.get(path.join(ROOT, file))).toContain(name);
    },
  );

  it('package.json names each entry explicitly (no wildcard subpath)', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    expect(Object.keys(pkg.exports).filter((k) => k.includes('*'))).toEqual([]);
    // Every entry but package.json itself is checked against docs/API.md above.
    const checked = Object.keys(ENTRIES).map((name) => name.replace(/^nestjs-distributed-lock/, '.'));
    expect(
      Object.keys(pkg.exports)
        .filter((k) => k !== './package.json')
        .sort(),
    ).toEqual(checked.sort());
  });
});
