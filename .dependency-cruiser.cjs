/*
 * The layers of lib/, as rules (docs/ARCHITECTURE.md opens with the same order). `npm run check:layers`
 * cruises lib/ with them, type-only imports included; `npm run graph` draws the same graph into
 * docs/ARCHITECTURE.md. A folder may import its own floor and the floors below it, never one above,
 * and no import may close a circle.
 */
const fs = require('node:fs');
const path = require('node:path');

/** lib/core's floors, bottom to top. */
const CORE_FLOORS = [
  'errors', //      what can go wrong, and how user text is written into a message
  'runtime', //     the world outside: monotonic and wall clocks, timers, the deadline heap, random ids
  'options', //     what a caller may ask, its defaults and every check of it
  'events', //      the engine's events and their diagnostics channels
  'redis', //       the door to Redis: scripts, commands, subscriptions, one adapter per client family
  'kinds', //       the protocol: each lock kind's scripts, their replies, the kind table, the key names
  'grant', //       a granted lock: its lease, handles, async scope, cohort, renewals, the held set
  'waiting', //     a caller waiting: its local queue, wake-ups, backoff, hand-off inbox
  'multi', //       several keys at once, all or none
  'inspection', //  who holds what: the inspector, the registry of held locks, force release
  'engine', //      the public calls: requests, the single-key acquisition, re-entry, close
  'topology', //    one Redis, Sentinel, Cluster, RedLock, and createLockEngine() that picks one
];
/**
 * The core's surfaces, above every floor: public.ts (the `/core` entry), index.ts (the same under the
 * folder's name) and internal.ts (what the entries use beyond it, each importer saying why).
 */
const CORE_SURFACE = ['public.ts', 'index.ts', 'internal.ts'];
/** What an entry may import of the core without saying why. */
const PUBLIC_CORE = ['^lib/core/public\\.ts$', '^lib/core/index\\.ts$'];

/** The entries above the core, bottom to top; folders of one tier never import each other. */
const ENTRY_TIERS = [
  ['observability', 'cli'],
  ['fencing', 'nest'],
  ['testing', 'terminus', 'console'],
];

/** The sentence that, in a file's first comment, says why it reaches past lib/core/public.ts. */
const PAST_PUBLIC = "Past the core's public surface:";
/**
 * Entry folders that reach past the core's public surface as a whole, and why. The testing module
 * builds the real engine over its in-memory backend from the core's own parts (the kinds, the script
 * runner, the engine), and its controls read their Redis names: that is what it is for.
 */
const PAST_PUBLIC_FOLDERS = ['lib/testing/'];

const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const corePath = (floor) => `^lib/core/${floor}/`;
const entryPath = (folder) => `^lib/${folder}/`;

/** Files of the entries whose first comment carries PAST_PUBLIC (read when the rules load). */
function filesPastPublic() {
  const found = [];
  const visit = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (entry.name.endsWith('.ts')) {
        const head = /^\s*(\/\*[\s\S]*?\*\/|(?:\/\/[^\n]*\n\s*)+)/.exec(fs.readFileSync(full, 'utf8'));
        if (head && head[1].replace(/\s*(\/\/|\*)\s*/g, ' ').includes(PAST_PUBLIC)) {
          found.push(path.relative(path.join(__dirname), full).split(path.sep).join('/'));
        }
      }
    }
  };
  for (const tier of ENTRY_TIERS) for (const folder of tier) visit(path.join(__dirname, 'lib', folder));
  return found;
}

const forbidden = [
  {
    name: 'no-circular',
    comment: 'Files that import each other, type-only imports included: a circle has no bottom floor.',
    severity: 'error',
    from: { path: '^lib/' },
    to: { circular: true },
  },
  ...CORE_FLOORS.map((floor, i) => ({
    name: `core-${floor}-upward`,
    comment: `lib/core/${floor}/ may import only ${
      i === 0 ? 'itself' : `itself and ${CORE_FLOORS.slice(0, i).join(', ')}`
    } (docs/ARCHITECTURE.md).`,
    severity: 'error',
    from: { path: corePath(floor) },
    to: {
      path: [...CORE_FLOORS.slice(i + 1).map(corePath), ...CORE_SURFACE.map((f) => `^lib/core/${esc(f)}$`)],
    },
  })),
  {
    name: 'core-loose-file',
    comment: 'Every file of lib/core lives on a floor, except its two surfaces.',
    severity: 'error',
    from: { path: '^lib/core/[^/]+\\.ts$', pathNot: CORE_SURFACE.map((f) => `^lib/core/${esc(f)}$`) },
    to: {},
  },
  {
    name: 'core-knows-no-entry',
    comment: 'lib/core is plain Node: it imports no entry above it (nest, testing, observability, ...).',
    severity: 'error',
    from: { path: '^lib/core/' },
    to: { path: '^lib/', pathNot: '^lib/core/' },
  },
  ...ENTRY_TIERS.flatMap((tier, t) =>
    tier.map((folder) => ({
      name: `entry-${folder}-upward`,
      comment: `lib/${folder}/ may import the core and ${
        t === 0 ? 'nothing else of lib/' : ENTRY_TIERS.slice(0, t).flat().join(', ')
      }, never a folder of its own tier or above.`,
      severity: 'error',
      from: { path: entryPath(folder) },
      to: {
        path: [
          ...tier.filter((other) => other !== folder).map(entryPath),
          ...ENTRY_TIERS.slice(t + 1)
            .flat()
            .map(entryPath),
          '^lib/index\\.ts$',
        ],
      },
    })),
  ),
  {
    name: 'entry-through-public-core',
    comment: `An entry reaches the core through lib/core/public.ts only, unless its first comment says why ("${PAST_PUBLIC} ...").`,
    severity: 'error',
    from: {
      path: ENTRY_TIERS.flat().map(entryPath),
      pathNot: [
        ...filesPastPublic().map((f) => `^${esc(f)}$`),
        ...PAST_PUBLIC_FOLDERS.map((f) => `^${esc(f)}`),
      ],
    },
    to: { path: '^lib/core/', pathNot: PUBLIC_CORE },
  },
  {
    name: 'root-entry-only-on-top',
    comment: 'lib/index.ts is the package root: nothing inside lib/ imports it.',
    severity: 'error',
    from: { path: '^lib/' },
    to: { path: '^lib/index\\.ts$' },
  },
  {
    name: 'lib-stands-alone',
    comment: 'lib/ imports nothing from tests, benchmarks, the sample app or scripts.',
    severity: 'error',
    from: { path: '^lib/' },
    to: { path: '^(test|bench|sample-app|scripts)/' },
  },
];

module.exports = {
  forbidden,
  options: {
    // Type-only imports tie two floors together as much as value imports do.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.d\\.ts$' },
    moduleSystems: ['es6', 'cjs'],
  },
  /** For scripts/layers.mjs: the order, to draw the floors. */
  layers: { CORE_FLOORS, CORE_SURFACE, ENTRY_TIERS, PAST_PUBLIC, PAST_PUBLIC_FOLDERS },
};
