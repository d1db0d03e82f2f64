/*
 * Every ```ts block of README.md and docs/*.md type-checks against the package as users install it:
 * the blocks are files of an app whose node_modules hold the unpacked tarball (`npm run test:packed`)
 * or, run alone, a fresh build laid out as an installed package, beside the repository's modules. They
 * compile as a Nest 11 app's tsconfig does (`module` / `moduleResolution` nodenext, CommonJS files), so
 * `nestjs-distributed-lock` and its subpaths resolve through package.json's exports map to the shipped
 * declarations: a name the docs use and the build does not export fails here, even when lib/ has it.
 * The blocks and their rules are test/docs/doc-examples.ts; test/docs/readme-examples.spec.ts runs the
 * same blocks against lib/ in the parallel run.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as ts from 'typescript';
import {
  blockFileName,
  documents,
  failures,
  repositoryOptions,
  ROOT,
  tsBlocks,
  typeCheck,
  type DocBlock,
} from '../../docs/doc-examples';

const run = promisify(execFile);

jest.setTimeout(180_000);

let app: string;
let blocks: Map<string, DocBlock>;
let diagnostics: Map<string, string[]>;

beforeAll(async () => {
  app = fs.mkdtempSync(path.join(os.tmpdir(), 'doc-examples-'));
  const modules = path.join(app, 'node_modules');
  fs.mkdirSync(modules);
  const installed = path.join(modules, 'nestjs-distributed-lock');
  const packed = process.env.PACKED_PACKAGE_DIR;
  if (packed) {
    fs.symlinkSync(packed, installed, 'dir');
  } else {
    await run(process.execPath, [path.join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT });
    fs.mkdirSync(installed);
    fs.cpSync(path.join(ROOT, 'dist'), path.join(installed, 'dist'), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(installed, 'package.json'));
  }
  // The app's other modules (Nest, the clients, the optional peers the examples import) are the
  // repository's: one link per package or scope.
  for (const name of fs.readdirSync(path.join(ROOT, 'node_modules'))) {
    if (name.startsWith('.') || name === 'nestjs-distributed-lock') continue;
    fs.symlinkSync(path.join(ROOT, 'node_modules', name), path.join(modules, name), 'dir');
  }
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'doc-examples', private: true }));

  const { blocks: found } = tsBlocks(documents());
  blocks = new Map(found.map((block) => [path.join(app, 'src', blockFileName(block)), block]));
  const options: ts.CompilerOptions = {
    ...repositoryOptions(),
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    // Only what the blocks import is read: the installed declarations are checked as a user's
    // compiler reads them (test/packaging/nest11/types checks them in full, skipLibCheck off).
    rootDir: app,
    typeRoots: [path.join(ROOT, 'node_modules', '@types')],
  };
  const sources = new Map([...blocks].map(([file, block]) => [file, block.source]));
  diagnostics = typeCheck(sources, options, (file) => blocks.get(file)!.fragment);
});

afterAll(() => {
  if (app) fs.rmSync(app, { recursive: true, force: true });
});

describe('TypeScript examples of README.md and docs/*.md, against the packed build', () => {
  it('resolves the package to the installed build, not to lib/', () => {
    const resolved = ts.resolveModuleName(
      'nestjs-distributed-lock/observability',
      path.join(app, 'src', 'probe.ts'),
      { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext },
      ts.sys,
    ).resolvedModule;
    expect(resolved?.resolvedFileName).toMatch(/dist\/cjs\/observability\/index\.d\.ts$/);
    expect(resolved?.isExternalLibraryImport).toBe(true);
  });

  it('type-checks every ```ts block as written, and parses every ```ts fragment', () => {
    expect(blocks.size).toBeGreaterThan(40);
    expect(failures(blocks, diagnostics)).toEqual({});
  });
});
