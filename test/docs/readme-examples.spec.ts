import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

/*
 * Every ```ts block of README.md and of the shipped docs listed in DOCS type-checks as written: each
 * block is a whole file, imports included, compiled with the repository's compiler options, and
 * `nestjs-distributed-lock` and its subpaths resolve to lib/. A block that is deliberately partial is
 * fenced ```ts-fragment instead and is not compiled. The blocks live only in memory.
 *
 * @slow one TypeScript program of every block (~15 s): scheduled first on a cold Jest cache (test/support/sequencer.cjs).
 */
const ROOT = path.resolve(__dirname, '..', '..');
const DIR = path.join(ROOT, 'test', 'docs', '__examples__');

/**
 * The documents whose ```ts blocks must compile, and the least number of blocks each has. CONSOLE,
 * OBSERVABILITY, SECURITY, TOPOLOGIES and TRANSPORTS still show ```ts fragments (signatures, snippets
 * without imports); a document joins this list once its blocks are whole files or fenced ts-fragment.
 */
const DOCS: Record<string, number> = {
  'README.md': 4,
  'docs/API.md': 2,
  'docs/MIGRATION.md': 4,
  'docs/TESTING.md': 4,
  'docs/FENCING.md': 3,
};

const BLOCK = /^```ts\n([\s\S]*?)^```$/gm;
const PACKAGE_IMPORT = /from '(nestjs-distributed-lock)(\/[a-z]+(?:\/[a-z]+)?)?'/g;

/** `nestjs-distributed-lock/fencing/nest` → lib/fencing/nest, and so on. */
function toLib(_all: string, _name: string, sub: string | undefined): string {
  return `from '${path.join(ROOT, 'lib', sub ? sub.slice(1) : '')}'`;
}

/** file name in memory → [document, source] */
function docBlocks(): Map<string, { doc: string; source: string }> {
  const blocks = new Map<string, { doc: string; source: string }>();
  for (const doc of Object.keys(DOCS)) {
    const text = fs.readFileSync(path.join(ROOT, doc), 'utf8');
    const stem = doc.replace(/\W+/g, '-').toLowerCase();
    let index = 0;
    for (const match of text.matchAll(BLOCK)) {
      const source = match[1]!.replace(PACKAGE_IMPORT, toLib);
      blocks.set(path.join(DIR, `${stem}-block-${++index}.ts`), { doc, source });
    }
  }
  return blocks;
}

let blocks: Map<string, { doc: string; source: string }>;
let diagnostics: Map<string, string[]>;

beforeAll(() => {
  const configFile = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const options: ts.CompilerOptions = {
    ...ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT).options,
    noEmit: true,
  };
  blocks = docBlocks();
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  const inMemory = (file: string) => blocks.get(path.resolve(file))?.source;
  host.fileExists = (file) => inMemory(file) !== undefined || fileExists.call(host, file);
  host.readFile = (file) => inMemory(file) ?? readFile.call(host, file);
  host.getSourceFile = (file, language, onError, shouldCreate) => {
    const text = inMemory(file);
    if (text !== undefined) return ts.createSourceFile(file, text, language, true);
    return getSourceFile.call(host, file, language, onError, shouldCreate);
  };
  const program = ts.createProgram([...blocks.keys()], options, host);
  diagnostics = new Map(
    [...blocks.keys()].map((file) => {
      const source = program.getSourceFile(file)!;
      const found = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
      return [
        path.basename(file),
        found.map((d) => {
          const line = d.start === undefined ? '' : source.getLineAndCharacterOfPosition(d.start).line + 1;
          return `line ${line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
        }),
      ];
    }),
  );
}, 120_000);

describe('examples in README.md and the shipped docs', () => {
  it.each(Object.entries(DOCS))('%s has at least %i TypeScript examples to check', (doc, least) => {
    expect([...blocks.values()].filter((block) => block.doc === doc).length).toBeGreaterThanOrEqual(least);
  });

  it('type-checks every ```ts block as written', () => {
    const failing = Object.fromEntries([...diagnostics].filter(([, found]) => found.length > 0));
    expect(failing).toEqual({});
  });
});
