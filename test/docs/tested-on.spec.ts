/*
 * The "Tested on" table (README.md and docs/SERVERS.md, the same table in both) names, for Redis 8.0 and
 * Valkey 8.1, the specs that ran each cell. They must be specs that exist and that the server matrix
 * (scripts/test-servers.cjs) runs, so that a cell cannot claim a run that CI does not make.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.resolve(__dirname, '..', '..');
// The runner's own lists, loaded by Node as the runner is (Jest's module wrapper refuses its shebang line).
const matrix = JSON.parse(
  execFileSync(process.execPath, ['-p', 'JSON.stringify(require("./scripts/test-servers.cjs"))'], {
    cwd: ROOT,
    encoding: 'utf8',
  }),
) as { SPECS: string[]; FAULT_SPECS: string[]; TIMING_SPECS: string[] };

function testedOnTable(file: string): string {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const section = text.slice(text.indexOf('## Tested on'));
  const table = /\n(\| topology [\s\S]*?)\n\n/.exec(section)?.[1];
  if (!table) throw new Error(`${file}: no "Tested on" table`);
  return table;
}

describe('the "Tested on" table', () => {
  it('is the same in README.md and docs/SERVERS.md', () => {
    expect(testedOnTable('README.md')).toBe(testedOnTable('docs/SERVERS.md'));
  });

  it('names, for Redis 8.0 and Valkey 8.1, only specs that exist and that the server matrix runs', () => {
    const table = testedOnTable('docs/SERVERS.md');
    const rows = table.split('\n').slice(2);
    const named = new Set<string>();
    for (const row of rows) {
      const matrixCell = row.split('|')[4] ?? '';
      for (const m of matrixCell.matchAll(/`([\w.-]+\/[\w./*-]+)`/g)) named.add(m[1]!);
    }
    expect(named.size).toBeGreaterThan(10);
    const run = [...matrix.SPECS, ...matrix.FAULT_SPECS, ...matrix.TIMING_SPECS];
    for (const spec of named) {
      const file = spec.endsWith('/*') ? `test/${spec.slice(0, -2)}` : `test/${spec}.spec.ts`;
      expect({ spec, exists: fs.existsSync(path.join(ROOT, file)) }).toEqual({ spec, exists: true });
      const ranBy = run.some((entry) => file === entry || file.startsWith(`${entry}/`));
      expect({ spec, ranByTheMatrix: ranBy }).toEqual({ spec, ranByTheMatrix: true });
    }
  });
});
