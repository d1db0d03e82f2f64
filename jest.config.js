/**
 * The one Jest configuration. Six projects, one per kind of spec; the package.json scripts pick them
 * with --selectProjects and add the run-wide flags (--runInBand, --detectOpenHandles):
 *
 *   unit    test/unit/, test/memory/  pure modules and the in-memory backend, no redis-server (test:quick);
 *           test/virtual-time/        the engine's timing logic on the simulator's virtual time
 *   redis   the rest of test/         real redis-server processes on free ports, in parallel workers
 *   faults  test/faults/              kills, pauses, restarts, freezes, failovers: each spec starts its own
 *                                     servers and processes; two spec files at a time
 *   timing  test/faults/timing/       assertions on timers (a partitioned holder told before the next
 *                                     grant, a lease ending locally first, cron once per tick): two files at
 *                                     a time, each waiting on its timers, with nothing else running
 *   alone   test/faults/alone/        assertions on CPU shares (cross-process mutual exclusion, cohort
 *                                     bounds and fairness): in band, with nothing else running
 *   packed  test/packaging/packed/    the packed tarball (PACKED_PACKAGE_DIR, set by scripts/test-packed.cjs)
 *   nest12  test/nest/, test/e2e/     the same specs on NestJS 12 and the packed build, in Jest's ESM mode
 *                                     (node --experimental-vm-modules; scripts/test-packed.cjs runs it)
 *
 * A new folder under test/ belongs to the redis project unless it is one of the folders above. A spec
 * that kills or freezes what it tests goes under test/faults/; one whose assertions need its timers on
 * time under test/faults/timing/, and one that needs both cores to itself under test/faults/alone/ (a
 * folder, not a list, says how a spec runs).
 */
const { swcOptions } = require('./test/support/swc-options.cjs');

const SPEC = '**/*.spec.ts';
const IGNORED = ['/node_modules/'];
const OWN_FOLDERS = ['unit', 'memory', 'virtual-time', 'faults', 'packaging'].map(
  (folder) => `<rootDir>/test/${folder}/`,
);
const NEST12_SUITE = '<rootDir>/test/packaging/nest12-suite';

// SWC, not ts-jest: on a cold cache (a fresh clone, CI) it costs a tenth of the CPU
// (test/support/swc-options.cjs holds the options, shared with the worker processes).
const swc = (moduleType) => ['@swc/jest', swcOptions(moduleType)];

const common = {
  testEnvironment: 'node',
  testMatch: [SPEC],
  transform: { '^.+\\.ts$': swc() },
  setupFilesAfterEnv: ['<rootDir>/test/support/fail-on-unhandled.ts'],
};

module.exports = {
  // Most specs wait on Redis, child processes and timers rather than on the CPU: more workers than
  // the 2 cores keeps both busy.
  maxWorkers: 4,
  // Jest's order, plus `@slow` spec files first on a cold cache (a fresh clone, CI).
  testSequencer: '<rootDir>/test/support/sequencer.cjs',
  // Run-wide, like maxWorkers (Jest reads no per-project timeout); test:faults passes 120 s.
  testTimeout: 60_000,
  projects: [
    {
      ...common,
      displayName: 'unit',
      roots: ['<rootDir>/test/unit', '<rootDir>/test/memory', '<rootDir>/test/virtual-time'],
      testPathIgnorePatterns: IGNORED,
    },
    {
      ...common,
      displayName: 'redis',
      roots: ['<rootDir>/test'],
      testPathIgnorePatterns: [...IGNORED, ...OWN_FOLDERS],
    },
    {
      ...common,
      displayName: 'faults',
      roots: ['<rootDir>/test/faults'],
      testPathIgnorePatterns: [...IGNORED, '<rootDir>/test/faults/timing/', '<rootDir>/test/faults/alone/'],
    },
    {
      ...common,
      displayName: 'timing',
      roots: ['<rootDir>/test/faults/timing'],
      testPathIgnorePatterns: IGNORED,
    },
    {
      ...common,
      displayName: 'alone',
      roots: ['<rootDir>/test/faults/alone'],
      testPathIgnorePatterns: IGNORED,
    },
    {
      ...common,
      displayName: 'packed',
      roots: ['<rootDir>/test/packaging/packed'],
      testPathIgnorePatterns: IGNORED,
    },
    {
      ...common,
      displayName: 'nest12',
      roots: ['<rootDir>/test/nest', '<rootDir>/test/e2e'],
      // demo.spec.ts drives worker processes that ts-node starts from the root node_modules (Nest 11);
      // type-checks.spec.ts compiles fixtures with the repository's tsconfig (Nest 11 types, CommonJS
      // __dirname). They stay in the Nest 11 run only.
      testPathIgnorePatterns: [
        ...IGNORED,
        '<rootDir>/test/e2e/demo.spec.ts',
        '<rootDir>/test/nest/type-checks.spec.ts',
      ],
      extensionsToTreatAsEsm: ['.ts'],
      setupFilesAfterEnv: [...common.setupFilesAfterEnv, `${NEST12_SUITE}/setup.mjs`],
      resolver: `${NEST12_SUITE}/resolver.cjs`,
      transform: { '^.+\\.ts$': swc('es6') },
    },
  ],
};
