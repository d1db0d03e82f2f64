import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

/*
 * The TypeScript examples of README.md and docs/*.md, as the docs checks read them.
 *
 * A block fenced ```ts is a whole file, imports included, and must type-check as written. A block that
 * is deliberately partial (a call without its set-up, a signature list) is fenced ```ts fragment: the
 * info string's second word is the marker, so GitHub still highlights it as TypeScript. A fragment is
 * not compiled, but it must parse. Any other fence that names TypeScript (```typescript, ```tsx,
 * ```ts-fragment, ```ts whole) is refused, so no block slips past the check by its spelling.
 */
export const ROOT = path.resolve(__dirname, '..', '..');

/** One TypeScript block: where it is, and its text. */
export interface DocBlock {
  doc: string;
  /** 1-based line of the opening fence. */
  line: number;
  source: string;
  fragment: boolean;
}

/** README.md and every Markdown file of docs/, repository-relative. */
export function documents(): string[] {
  const docs = fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

const FENCE = /^```([^\n`]*)\n([\s\S]*?)^```$/gm;
const TYPESCRIPT = /^(ts|typescript|tsx|mts|cts)\b/i;

/** Every TypeScript block of `docs`, and the fences that name TypeScript in a form the check does not read. */
export function tsBlocks(docs: string[]): { blocks: DocBlock[]; unreadable: string[] } {
  const blocks: DocBlock[] = [];
  const unreadable: string[] = [];
  for (const doc of docs) {
    const text = fs.readFileSync(path.join(ROOT, doc), 'utf8');
    for (const match of text.matchAll(FENCE)) {
      const info = match[1]!.trim();
      if (!TYPESCRIPT.test(info)) continue;
      const line = text.slice(0, match.index).split('\n').length;
      if (info === 'ts' || info === 'ts fragment') {
        blocks.push({ doc, line, source: match[2]!, fragment: info !== 'ts' });
      } else {
        unreadable.push(`${doc}:${line}: \`\`\`${info}`);
      }
    }
  }
  return { blocks, unreadable };
}

/** The name a block gets in memory: `docs-api-md-line-120.ts`. */
export function blockFileName(block: DocBlock): string {
  return `${block.doc.replace(/\W+/g, '-').toLowerCase()}-line-${block.line}.ts`;
}

/**
 * Type-checks `files` (path → source, held in memory only) in one program; `blockName(file)` → the
 * diagnostics of each file, as `line N: message`. Syntax only for the files `syntaxOnly` names.
 */
export function typeCheck(
  files: Map<string, string>,
  options: ts.CompilerOptions,
  syntaxOnly: (file: string) => boolean = () => false,
): Map<string, string[]> {
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  const inMemory = (file: string) => files.get(path.resolve(file));
  host.fileExists = (file) => inMemory(file) !== undefined || fileExists.call(host, file);
  host.readFile = (file) => inMemory(file) ?? readFile.call(host, file);
  host.getSourceFile = (file, language, onError, shouldCreate) => {
    const text = inMemory(file);
    if (text !== undefined) return ts.createSourceFile(file, text, language, true);
    return getSourceFile.call(host, file, language, onError, shouldCreate);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  return new Map(
    [...files.keys()].map((file) => {
      const source = program.getSourceFile(file)!;
      const found = [
        ...program.getSyntacticDiagnostics(source),
        ...(syntaxOnly(file) ? [] : program.getSemanticDiagnostics(source)),
      ];
      return [
        file,
        found.map((d) => {
          const line = d.start === undefined ? '' : source.getLineAndCharacterOfPosition(d.start).line + 1;
          return `line ${line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
        }),
      ];
    }),
  );
}

/** The repository's compiler options (tsconfig.json), without output. */
export function repositoryOptions(): ts.CompilerOptions {
  const configFile = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  return { ...ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT).options, noEmit: true };
}

/** `{ 'README.md:27': ['line 3: …'] }` for every block with diagnostics. */
export function failures(
  blocks: Map<string, DocBlock>,
  found: Map<string, string[]>,
): Record<string, string[]> {
  return Object.fromEntries(
    [...found]
      .filter(([, messages]) => messages.length > 0)
      .map(([file, messages]) => {
        const block = blocks.get(file)!;
        return [`${block.doc}:${block.line}`, messages];
      }),
  );
}
