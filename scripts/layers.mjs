// The layers of lib/, held by dependency-cruiser with the rules of .dependency-cruiser.cjs.
//   node scripts/layers.mjs           fails on an upward import, a circle (type-only imports count) or
//                                     a stale drawing in docs/ARCHITECTURE.md   (npm run check:layers)
//   node scripts/layers.mjs --graph   redraws that drawing from the code         (npm run graph)
// It calls dependency-cruiser's API: its command line refuses Node 20, which this package supports.
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { cruise } from 'dependency-cruiser';

const require = createRequire(import.meta.url);
const config = require('../.dependency-cruiser.cjs');
const ARCHITECTURE = 'docs/ARCHITECTURE.md';
const BEGIN = '<!-- layers:begin (npm run graph draws this from the code; do not edit) -->';
const END = '<!-- layers:end -->';

const resolveOptions = { extensions: ['.ts', '.js', '.json'] };
const transpileOptions = { tsConfig: { fileName: config.options.tsConfig.fileName } };

/** The rules' violations in lib/. */
async function violations() {
  const { output } = await cruise(
    ['lib'],
    { ...config.options, validate: true, ruleSet: { forbidden: config.forbidden } },
    resolveOptions,
    transpileOptions,
  );
  return { summary: output.summary, list: output.summary.violations };
}

/** The folder graph of lib/ as a mermaid block: each floor of the core and each entry is one node. */
async function drawing() {
  const { CORE_FLOORS, ENTRY_TIERS } = config.layers;
  const { output } = await cruise(
    ['lib'],
    {
      ...config.options,
      collapse: '^lib/core/[^/]+/|^lib/[^/]+/',
      exclude: { path: ['\\.d\\.ts$', '^lib/index\\.ts$'] },
      outputType: 'json',
    },
    resolveOptions,
    transpileOptions,
  );
  const modules = JSON.parse(output).modules;
  // A collapsed node: a floor (core/kinds), an entry (nest), or the core's surfaces (core).
  const nodeOf = (source) => source.replace(/^lib\//, '').replace(/\/$/, '');
  const id = (name) => (name === 'core' ? 'core_surface' : name.replace(/[^a-z0-9]/gi, '_'));
  const direct = new Map();
  for (const m of modules) {
    if (!m.source.startsWith('lib/')) continue;
    for (const d of m.dependencies) {
      if (!d.resolved.startsWith('lib/') || d.resolved === m.source) continue;
      const from = id(nodeOf(m.source));
      if (!direct.has(from)) direct.set(from, new Set());
      direct.get(from).add(id(nodeOf(d.resolved)));
    }
  }
  // Drawn without the arrows that a longer path already implies (a transitive reduction): the floors
  // read as a stack, and an arrow says "reaches, directly or through the floors between".
  const reach = (from, seen = new Set()) => {
    for (const to of direct.get(from) ?? []) if (!seen.has(to)) reach(to, seen.add(to));
    return seen;
  };
  const edges = [];
  for (const [from, tos] of direct) {
    for (const to of tos) {
      const implied = [...tos].some((via) => via !== to && reach(via).has(to));
      if (!implied) edges.push(`  ${from} --> ${to}`);
    }
  }
  const lines = ['```mermaid', 'flowchart BT'];
  lines.push('  subgraph core["lib/core, bottom to top"]');
  for (const floor of CORE_FLOORS) lines.push(`    ${id(`core/${floor}`)}["${floor}"]`);
  lines.push('    core_surface["public.ts · index.ts · internal.ts"]');
  lines.push('  end');
  ENTRY_TIERS.flat().forEach((entry) => lines.push(`  ${id(entry)}["${entry}"]`));
  lines.push(...edges.sort());
  lines.push('```');
  return lines.join('\n');
}

function withDrawing(doc, block) {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${ARCHITECTURE} has no ${BEGIN} ... ${END} markers`);
  return `${doc.slice(0, start)}${BEGIN}\n${block}\n${doc.slice(end)}`;
}

const doc = readFileSync(ARCHITECTURE, 'utf8');
const updated = withDrawing(doc, await drawing());
if (process.argv.includes('--graph')) {
  writeFileSync(ARCHITECTURE, updated);
  console.log(`layers: drew the folder graph into ${ARCHITECTURE}`);
} else {
  const { summary, list } = await violations();
  for (const v of list) {
    const via = v.cycle ? `\n    circle: ${v.cycle.map((c) => c.name ?? c).join(' → ')}` : '';
    console.error(`  ${v.rule.name}: ${v.from} → ${v.to}${via}`);
  }
  const stale = updated !== doc;
  if (stale) console.error(`  ${ARCHITECTURE}: the drawing of the layers is stale; run npm run graph`);
  console.log(
    `layers: ${summary.totalCruised} files, ${summary.totalDependenciesCruised} imports (type-only included), ` +
      `${list.length} violations${stale ? ', stale drawing' : ''}`,
  );
  if (list.length > 0 || stale) process.exit(1);
}
