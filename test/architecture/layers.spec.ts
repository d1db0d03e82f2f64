/*
 * The rule of the layers, checked on the sources: core knows Redis and time and imports nothing from
 * Nest; the Nest layer holds no Lua and reaches core only through its public barrel (lib/core/index.ts:
 * the public types, the errors, the engine factory) — the engine itself only through the
 * DistributedLockEngine token. No function takes more than 4 positional
 * parameters (a fifth is a concept of its own: an object). Files are split by concept, not by length,
 * so no line count is checked here.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

const LIB = path.resolve(__dirname, '..', '..', 'lib');

function filesUnder(dir: string, ext: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(full, ext);
    return entry.name.endsWith(ext) ? [full] : [];
  });
}

function importsOf(file: string): string[] {
  const source = fs.readFileSync(file, 'utf8');
  return [...source.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+'([^']+)'/g)].map((m) => m[1]!);
}

const rel = (file: string) => path.relative(LIB, file);

describe('the layers of lib/', () => {
  it('core imports nothing from Nest, testing, observability or terminus', () => {
    const offenders = filesUnder(path.join(LIB, 'core'), '.ts').flatMap((file) =>
      importsOf(file)
        .filter(
          (spec) => spec.startsWith('@nestjs/') || /\/(nest|testing|observability|terminus)(\/|$)/.test(spec),
        )
        .map((spec) => `${rel(file)} → ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it('the Nest layer holds no Lua and imports core only through its surfaces', () => {
    const nest = path.join(LIB, 'nest');
    expect(filesUnder(nest, '.lua')).toEqual([]);
    const offenders = filesUnder(nest, '.ts').flatMap((file) =>
      importsOf(file)
        .filter((spec) => spec.startsWith('.'))
        .map((spec) => path.resolve(path.dirname(file), spec))
        .filter((target) => target.startsWith(path.join(LIB, 'core')))
        .filter((target) => !['', 'public', 'internal'].some((f) => target === path.join(LIB, 'core', f)))
        .map((target) => `${rel(file)} → ${rel(target)}`),
    );
    expect(offenders).toEqual([]);
  });

  it('no function under lib/ takes more than 4 parameters', () => {
    const offenders: string[] = [];
    for (const file of filesUnder(LIB, '.ts')) {
      const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && node.parameters.length > 4) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart());
          offenders.push(`${rel(file)}:${line + 1} (${node.parameters.length} parameters)`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(offenders).toEqual([]);
  });
});
