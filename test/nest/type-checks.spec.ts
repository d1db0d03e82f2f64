import * as path from 'path';
import * as ts from 'typescript';

/*
 * Compile-time checks of @DistributedLock (issue 10): type-checks in-memory sources with the
 * repository's tsconfig options. They live only in memory, so `npm run typecheck` never sees the
 * failing ones.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const DIR = path.join(ROOT, 'test', 'nest', '__type_fixtures__');

const HEADER = `
import { Observable, of } from 'rxjs';
import { DistributedLock } from '../../../lib';
`;

const fixtures: Record<string, string> = {
  'sync-method.ts': `${HEADER}
export class Hits {
  @DistributedLock({ key: 'hits' })
  recordHit(): void {}
}`,
  'sync-value.ts': `${HEADER}
export class Hits {
  @DistributedLock({ key: 'hits:{0}' })
  count(id: string): number { return id.length; }
}`,
  'mismatched-key.ts': `${HEADER}
export class Shop {
  @DistributedLock({ key: (id: number) => 'buy:' + id.toFixed(0) })
  async buy(id: string): Promise<string> { return id; }
}`,
  'correct.ts': `${HEADER}
export class Shop {
  @DistributedLock({ key: 'buy:{0}', waitMs: 100 })
  async buy(id: string): Promise<string> { return id; }

  @DistributedLock({ key: (id: string, qty: number) => 'order:' + id + ':' + qty })
  async order(id: string, qty: number): Promise<number> { return qty; }

  @DistributedLock({ key: 'feed' })
  feed(): Observable<number> { return of(1, 2, 3); }

  @DistributedLock({ key: 'nightly', onBusy: 'skip', minHoldMs: 500, maxHoldMs: 60_000 })
  async nightly(): Promise<void> {}
}`,
};

let diagnostics: Record<string, string[]>;

beforeAll(() => {
  const configFile = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT);
  const options: ts.CompilerOptions = { ...parsed.options, noEmit: true };
  const host = ts.createCompilerHost(options);
  const virtual = new Map(Object.entries(fixtures).map(([name, text]) => [path.join(DIR, name), text]));
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (file) => virtual.has(path.resolve(file)) || fileExists.call(host, file);
  host.readFile = (file) => virtual.get(path.resolve(file)) ?? readFile.call(host, file);
  host.getSourceFile = (file, language, onError, shouldCreate) => {
    const text = virtual.get(path.resolve(file));
    if (text !== undefined) return ts.createSourceFile(file, text, language, true);
    return getSourceFile.call(host, file, language, onError, shouldCreate);
  };
  const program = ts.createProgram([...virtual.keys()], options, host);
  diagnostics = {};
  for (const name of Object.keys(fixtures)) {
    const file = program.getSourceFile(path.join(DIR, name))!;
    diagnostics[name] = [
      ...program.getSyntacticDiagnostics(file),
      ...program.getSemanticDiagnostics(file),
    ].map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  }
}, 60_000);

describe('@DistributedLock types', () => {
  it('accepts async methods, Observable methods, matching key functions and template keys', () => {
    expect(diagnostics['correct.ts']).toEqual([]);
  });

  it('refuses a sync method returning void', () => {
    expect(diagnostics['sync-method.ts'].length).toBeGreaterThan(0);
  });

  it('refuses a sync method returning a plain value', () => {
    expect(diagnostics['sync-value.ts'].length).toBeGreaterThan(0);
  });

  it("refuses a key function whose parameters do not match the method's", () => {
    expect(diagnostics['mismatched-key.ts'].length).toBeGreaterThan(0);
    expect(diagnostics['mismatched-key.ts'].join('\n')).toMatch(/number|string/);
  });
});
