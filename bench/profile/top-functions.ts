/*
 * Summarizes a V8 .cpuprofile (node --cpu-prof): self time per function, the top N, as a table.
 *   node -r ts-node/register/transpile-only bench/profile/top-functions.ts FILE [N]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

const [file, topArg] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file!, 'utf8')) as { nodes: ProfileNode[] };
const self = new Map<string, number>();
let total = 0;
for (const node of profile.nodes) {
  const hits = node.hitCount ?? 0;
  total += hits;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url.replace(/^.*\/(node_modules\/)?/, (m) => (m.includes('node_modules') ? 'nm/' : ''));
  const name = `${functionName || '(anonymous)'} ${where ? `${where}:${lineNumber + 1}` : ''}`.trim();
  self.set(name, (self.get(name) ?? 0) + hits);
}
console.log('| self % | function |\n|---:|---|');
for (const [name, hits] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 25))) {
  console.log(`| ${((100 * hits) / total).toFixed(1)} | ${name.replace(/\|/g, '\\|')} |`);
}
