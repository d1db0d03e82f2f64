/*
 * Summarizes a V8 .cpuprofile (node --cpu-prof) of bench/profile/solo-loop.ts: busy samples only
 * (idle and start-up — ts-node, module loading — left out), by category (socket writes, ioredis,
 * GC, Node internals, this library) and the library's own functions by self time.
 *   node -r ts-node/register/transpile-only bench/profile/top-functions.ts FILE [N]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  callFrame: { functionName: string; url: string };
  hitCount?: number;
}

const STARTUP = /typescript|ts-node|node:internal\/modules|loader/;
const [file, topArg] = process.argv.slice(2);
const { nodes } = JSON.parse(readFileSync(file!, 'utf8')) as { nodes: ProfileNode[] };
const byCategory = new Map<string, number>();
const byFunction = new Map<string, number>();
let busy = 0;
for (const node of nodes) {
  const hits = node.hitCount ?? 0;
  const { functionName: fn, url } = node.callFrame;
  if (
    STARTUP.test(url) ||
    ['(idle)', '(program)', 'readFileUtf8', 'compileFunction', 'ContextifyScript'].includes(fn)
  )
    continue;
  busy += hits;
  const ours = url.includes('/lib/') && !url.includes('node_modules');
  const category = ours
    ? 'this library'
    : url.includes('ioredis')
      ? 'ioredis'
      : ['writeUtf8String', 'writev', 'writeBuffer'].includes(fn)
        ? 'socket writes (syscalls)'
        : fn === '(garbage collector)'
          ? 'GC'
          : 'Node internals';
  byCategory.set(category, (byCategory.get(category) ?? 0) + hits);
  if (ours) {
    const name = `${url.split('/lib/')[1]} ${fn || '(anonymous)'}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + hits);
  }
}
const pct = (hits: number) => `${((100 * hits) / busy).toFixed(1)} %`;
console.log(`${busy} busy samples\n\n| category | share of busy CPU |\n|---|---:|`);
for (const [name, hits] of [...byCategory].sort((a, b) => b[1] - a[1]))
  console.log(`| ${name} | ${pct(hits)} |`);
console.log('\n| library function (self time) | share of busy CPU |\n|---|---:|');
for (const [name, hits] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 8)))
  console.log(`| ${name} | ${pct(hits)} |`);
