#!/usr/bin/env node
// `npm run build`: one source (lib/, extensionless TypeScript imports), two module formats.
//
//   dist/esm/      the canonical build: ES modules ("type": "module"), `.js` extensions added to every
//                  relative import, `__dirname` shimmed from import.meta.url, the Lua scripts beside it
//   dist/cjs/      a CommonJS copy ("type": "commonjs") with its own .d.ts, for runtimes that cannot
//                  require() an ES module (Jest's CommonJS runtime before Node 24.9)
//   dist/entries/  one small file set per public entry point (ENTRY_POINTS below):
//                    <name>.mjs / .d.mts   `import` condition: re-exports dist/esm
//                    <name>.cjs / .d.cts   `require` condition: require()s dist/esm (Node ≥ 20.19 loads
//                                          ES modules synchronously), falling back to dist/cjs only when
//                                          the runtime answers ERR_REQUIRE_ESM
//
// So a process that loads the package both ways still gets ONE copy of every class (the Nest module,
// the service, the error classes): see docs/PACKAGING.md and test/packaging/nest11/dual-load.test.mjs.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const lib = path.join(root, 'lib');

/**
 * The public entry points: subpath → source file under lib/ (without `.ts`). Adding a subpath is one
 * line here plus its row in package.json's `exports` (no wildcard: only these subpaths are entries). Entries whose source does not exist yet
 * are skipped with a note.
 */
const ENTRY_POINTS = {
  index: 'index',
  core: 'core/public',
  testing: 'testing/index',
  terminus: 'terminus/index',
  observability: 'observability/index',
  console: 'console/index',
  // ./fencing and ./fencing/nest in package.json's exports (a flat file name here).
  fencing: 'fencing/index',
  'fencing-nest': 'fencing/nest/index',
};

/** The CLI (package.json "bin"): a CommonJS launcher of the CommonJS build (a process of its own). */
const BIN = { name: 'nestjs-distributed-lock', source: 'cli/bin' };

/** One tsc run of tsconfig.build.json; the two builds run side by side (tsc is single-threaded). */
function tsc(...args) {
  const bin = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const child = spawn(process.execPath, [bin, '-p', 'tsconfig.build.json', ...args], {
    cwd: root,
    stdio: 'inherit',
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`build: tsc ${args.join(' ')} failed (exit ${code})`)),
    );
  });
}

function walk(dir, filter) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return walk(full, filter);
    return entry.isFile() && filter(entry.name) ? [full] : [];
  });
}

function writeJson(file, value) {
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + '\n');
}

/** Copies every .lua file under lib/ to the same relative path under `to` (the loader reads them at run time). */
function copyLua(to) {
  const files = walk(lib, (name) => name.endsWith('.lua'));
  if (files.length === 0) throw new Error('build: no .lua files found under lib/');
  for (const file of files) {
    const target = path.join(to, path.relative(lib, file));
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(file, target);
  }
  return files.length;
}

// Relative specifiers in tsc's output: `from './x'`, `import './x'`, `import('./x')`, `require('./x')`.
const SPECIFIER = /((?:\bfrom|\bimport|\bimport\(|\brequire\()\s*)(['"])(\.{1,2}\/[^'"]*|\.{1,2})\2/g;

/** Node's ESM resolver wants full paths: `./a` → `./a.js`, `./dir` → `./dir/index.js`. */
function withExtension(fromFile, specifier) {
  if (/\.(m|c)?js$/.test(specifier)) return specifier;
  const base = path.resolve(path.dirname(fromFile), specifier);
  if (fs.existsSync(`${base}.js`)) return `${specifier}.js`;
  if (fs.existsSync(path.join(base, 'index.js'))) return `${specifier.replace(/\/$/, '')}/index.js`;
  throw new Error(`build: cannot resolve ${specifier} from ${path.relative(root, fromFile)}`);
}

// ES modules have no __dirname / __filename; the Lua loader (lib/core/script-library.ts) reads files
// beside itself. Defined from import.meta.url in the files that use them, so lib/ stays one source.
function pathShim(text) {
  const dirname = /\b__dirname\b/.test(text);
  const filename = /\b__filename\b/.test(text);
  if (!dirname && !filename) return '';
  return (
    "import { fileURLToPath as __dlFileURLToPath } from 'node:url';\n" +
    "import { dirname as __dlDirname } from 'node:path';\n" +
    'const __dlFile = __dlFileURLToPath(import.meta.url);\n' +
    (filename ? 'const __filename = __dlFile;\n' : '') +
    (dirname ? 'const __dirname = __dlDirname(__dlFile);\n' : '')
  );
}

function finishEsm(dir) {
  for (const file of walk(dir, (name) => name.endsWith('.js') || name.endsWith('.d.ts'))) {
    let text = fs.readFileSync(file, 'utf8');
    text = text.replace(
      SPECIFIER,
      (_all, head, quote, spec) => `${head}${quote}${withExtension(file, spec)}${quote}`,
    );
    if (file.endsWith('.js')) text = pathShim(text) + text;
    if (file.endsWith('.js') && /\brequire\(\s*['"]|\bmodule\.exports\b|\bexports\.\w+\s*=/.test(text)) {
      throw new Error(`build: CommonJS left in the ESM build: ${path.relative(root, file)}`);
    }
    fs.writeFileSync(file, text);
  }
  writeJson(path.join(dir, 'package.json'), { type: 'module' });
}

const CJS_LOADER = `'use strict';
// The \`require\` entry of nestjs-distributed-lock (generated by scripts/build.mjs). Loads the ES module
// build, so that require() and import share one copy of every class; only a runtime that cannot
// require() an ES module (ERR_REQUIRE_ESM: Jest's CommonJS runtime before Node 24.9) gets the CommonJS copy.
module.exports = function load(esm, cjs) {
  try {
    return esm();
  } catch (error) {
    if (error && error.code === 'ERR_REQUIRE_ESM') return cjs();
    throw error;
  }
};
`;

function writeEntries(dir) {
  fs.mkdirSync(dir, { recursive: true });
  // Outside entries/, so that the `./*` export pattern cannot reach it.
  fs.writeFileSync(path.join(dir, '..', 'load.cjs'), CJS_LOADER);
  const written = [];
  for (const [name, source] of Object.entries(ENTRY_POINTS)) {
    if (!fs.existsSync(path.join(lib, `${source}.ts`))) {
      console.log(`build: entry point ./${name} skipped (lib/${source}.ts does not exist yet)`);
      continue;
    }
    const esm = `../esm/${source}.js`;
    const cjs = `../cjs/${source}.js`;
    fs.writeFileSync(path.join(dir, `${name}.mjs`), `export * from '${esm}';\n`);
    fs.writeFileSync(path.join(dir, `${name}.d.mts`), `export * from '${esm}';\n`);
    fs.writeFileSync(
      path.join(dir, `${name}.cjs`),
      `'use strict';\nmodule.exports = require('../load.cjs')(\n  () => require('${esm}'),\n  () => require('${cjs}'),\n);\n`,
    );
    fs.writeFileSync(path.join(dir, `${name}.d.cts`), `export * from '${cjs}';\n`);
    written.push(name === 'index' ? '.' : `./${name}`);
  }
  return written;
}

fs.rmSync(dist, { recursive: true, force: true });
await Promise.all([
  tsc('--outDir', 'dist/cjs', '--module', 'commonjs'),
  tsc('--outDir', 'dist/esm', '--module', 'es2022'),
]);
writeJson(path.join(dist, 'cjs', 'package.json'), { type: 'commonjs' });
finishEsm(path.join(dist, 'esm'));
const lua = copyLua(path.join(dist, 'esm'));
copyLua(path.join(dist, 'cjs'));
const entries = writeEntries(path.join(dist, 'entries'));
fs.mkdirSync(path.join(dist, 'bin'), { recursive: true });
const binFile = path.join(dist, 'bin', `${BIN.name}.cjs`);
fs.writeFileSync(binFile, `#!/usr/bin/env node\n'use strict';\nrequire('../cjs/${BIN.source}.js');\n`);
fs.chmodSync(binFile, 0o755);
console.log(`build: dist/esm + dist/cjs (${lua} Lua scripts each), entry points ${entries.join(', ')}`);
