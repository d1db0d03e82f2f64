import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

/*
 * Every ```ts block of README.md type-checks as written (each block is a whole file, imports
 * included), with the repository's compiler options; `nestjs-distributed-lock` and its subpaths
 * resolve to lib/. The blocks live only in memory.
 *
 * @slow a TypeScript program of every README block (~12 s): scheduled first on a cold Jest cache (test/support/sequencer.cjs).
 */
const ROOT = path.resolve(__dirname, '..', '..');
const DIR = path.join(ROOT, 'test', 'docs', '__readme__');

function readmeBlocks(): Map<string, string> {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const blocks = new Map<string, string>();
  let index = 0;
  for (const match of readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)) {
    const source = match[1]!.replace(
      /from 'nestjs-distributed-lock(\/[a-z]+)?'/g,
      (_all, sub: string | undefined) => `from '${path.join(ROOT, 'lib', sub ? sub.slice(1) : '')}'`,
    );
    blocks.set(path.join(DIR, `block-${++index}.ts`), source);
  }
  return blocks;
}

let diagnostics: Map<string, string[]>;

beforeAll(() => {
  const configFile = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const options: ts.CompilerOptions = {
    ...ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT).options,
    noEmit: true,
  };
  const blocks = readmeBlocks();
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (file) => blocks.has(path.resolve(file)) || fileExists.call(host, file);
  host.readFile = (file) => blocks.get(path.resolve(file)) ?? readFile.call(host, file);
  host.getSourceFile = (file, language, onError, shouldCreate) => {
    const text = blocks.get(path.resolve(file));
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
        found.map((d) => `${d.start ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`),
      ];
    }),
  );
}, 120_000);

describe('README examples', () => {
  it('has TypeScript examples to check', () => {
    expect(diagnostics.size).toBeGreaterThanOrEqual(4);
  });

  it('type-checks every ```ts block as written', () => {
    const failing = Object.fromEntries([...diagnostics].filter(([, found]) => found.length > 0));
    expect(failing).toEqual({});
  });
});
