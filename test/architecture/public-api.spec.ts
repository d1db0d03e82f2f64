/*
 * The public API is curated: every package entry exports what a user writes, and every name it
 * exports has an entry in docs/API.md (and every name listed there is exported). A new export without a docs entry
 * fails here, and so does the root entry growing back towards a list of internals.
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
