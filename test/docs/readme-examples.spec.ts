import * as path from 'path';
import {
  blockFileName,
  documents,
  failures,
  repositoryOptions,
  ROOT,
  tsBlocks,
  typeCheck,
  type DocBlock,
} from './doc-examples';

/*
 * Every ```ts block of README.md and docs/*.md type-checks as written: each block is a whole file,
 * imports included, compiled with the repository's compiler options, and `nestjs-distributed-lock` and
 * its subpaths resolve to lib/ (the inner loop; test/packaging/packed/doc-examples.spec.ts compiles the
 * same blocks against the packed tarball). A block fenced ```ts fragment is partial on purpose: it must
 * parse, and is not compiled (doc-examples.ts). The blocks live only in memory.
 *
 * @slow one TypeScript program of every block (~15 s): scheduled first on a cold Jest cache (test/support/sequencer.cjs).
 */
const DIR = path.join(ROOT, 'test', 'docs', '__examples__');

/**
 * The least number of whole (compiled) blocks of the documents that teach by example, so that a
 * document cannot drop out of the check by fencing its examples as fragments.
 */
const WHOLE_AT_LEAST: Record<string, number> = {
  'README.md': 7,
  'docs/API.md': 2,
  'docs/CONSOLE.md': 3,
  'docs/FENCING.md': 3,
  'docs/MIGRATION.md': 4,
  'docs/OBSERVABILITY.md': 3,
  'docs/SECURITY.md': 2,
  'docs/TESTING.md': 4,
  'docs/TOPOLOGIES.md': 3,
  'docs/TRANSPORTS.md': 3,
};

const PACKAGE_IMPORT = /from '(nestjs-distributed-lock)(\/[a-z]+(?:\/[a-z]+)?)?'/g;

/** `nestjs-distributed-lock/fencing/nest` → lib/fencing/nest, and so on. */
function toLib(_all: string, _name: string, sub: string | undefined): string {
  return `from '${path.join(ROOT, 'lib', sub ? sub.slice(1) : '')}'`;
}

const docs = documents();
const { blocks: found, unreadable } = tsBlocks(docs);
let blocks: Map<string, DocBlock>;
let diagnostics: Map<string, string[]>;

beforeAll(() => {
  blocks = new Map(found.map((block) => [path.join(DIR, blockFileName(block)), block]));
  const sources = new Map(
    [...blocks].map(([file, block]) => [file, block.source.replace(PACKAGE_IMPORT, toLib)]),
  );
  diagnostics = typeCheck(sources, repositoryOptions(), (file) => blocks.get(file)!.fragment);
}, 120_000);

describe('TypeScript examples in README.md and docs/*.md', () => {
  it('reads every fence that names TypeScript: ```ts (a whole file) or ```ts fragment', () => {
    expect(unreadable).toEqual([]);
  });

  it.each(Object.entries(WHOLE_AT_LEAST))('%s has at least %i whole examples to compile', (doc, least) => {
    expect(docs).toContain(doc);
    expect(found.filter((block) => block.doc === doc && !block.fragment).length).toBeGreaterThanOrEqual(
      least,
    );
  });

  it('type-checks every ```ts block as written, and parses every ```ts fragment', () => {
    expect(failures(blocks, diagnostics)).toEqual({});
  });
});
