#!/usr/bin/env node
// `npm run build`: one source (lib/, extensionless TypeScript imports), two module formats, one set of
// declarations (docs/PACKAGING.md).
//
//   dist/esm/      ES modules ("type": "module"), `.js` added to every relative import. Node ≥ 20.19 /
//                  22.12 load it for `require` and `import` alike (the `module-sync` export condition),
//                  so a process that loads the package both ways holds ONE copy of every class;
//                  runtimes that do not know that condition and import (Jest's ESM mode, bundlers) too.
//   dist/cjs/      CommonJS ("type": "commonjs"), for the runtimes that do not know `module-sync` and
//                  require (Jest's CommonJS runtime, webpack, esbuild's require).
//
// Each build carries the same declarations (.d.ts), in its own format: a CommonJS declaration file that
// imports Nest 12 (ES modules only) is an error under `moduleResolution: node16` (TS1479), so ES module
// consumers need ES module declarations. They are emitted once, into dist/cjs, and copied to dist/esm
// with `.js` added to their specifiers.
//
// JavaScript ships without comments (the declarations keep every doc comment), and only declarations
// an entry point reaches are kept. The Lua scripts are code (lib/**/lua-sources.ts, scripts/embed-lua.mjs):
// nothing is read beside the module at load, so bundles work.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');

/**
 * The public entry points: subpath → source file under lib/ (without `.ts`). Adding a subpath is one
 * line here plus its row in package.json's `exports` and `typesVersions` (no wildcard: only these
 * subpaths are entries).
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

/** One tsc run of tsconfig.build.json; the three builds run side by side (tsc is single-threaded). */
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

/** Every relative specifier of `text`, the contents of `file`, with its extension (withExtension). */
function withExtensions(text, file) {
  return text.replace(
    SPECIFIER,
    (_all, head, quote, spec) => `${head}${quote}${withExtension(file, spec)}${quote}`,
  );
}

// Optional peers are loaded by a literal `require('<peer>')` inside a `try` at the call site
// (lib/core/errors/optional-peer.ts). An ES module has no `require`: there the call becomes a `require` of this
// module's own location (createRequire of import.meta.url). The literal stays for bundlers: esbuild
// bundles it into either output format, where `require` is the bundle's.
const PEER_REQUIRE = /\brequire\((['"])(@?[a-z][\w./-]*)\1\)/g;
const REQUIRE_SHIM = "import { createRequire as __dlCreateRequire } from 'node:module';\n";

function finishEsm(dir) {
  for (const file of walk(dir, (name) => name.endsWith('.js'))) {
    let text = withExtensions(fs.readFileSync(file, 'utf8'), file);
    const peers = text.replace(
      PEER_REQUIRE,
      (call, quote, name) =>
        `(typeof require === 'function' ? ${call} : __dlCreateRequire(import.meta.url)(${quote}${name}${quote}))`,
    );
    if (peers !== text) text = REQUIRE_SHIM + peers;
    if (
      /\brequire\((?!['"])|\bmodule\.exports\b|\bexports\.\w+\s*=|\b__dirname\b|\b__filename\b/.test(text)
    ) {
      throw new Error(`build: CommonJS left in the ESM build: ${path.relative(root, file)}`);
    }
    fs.writeFileSync(file, text);
  }
  writeJson(path.join(dir, 'package.json'), { type: 'module' });
}

// Relative specifiers of a declaration file: `from './x'`, `import('./x')`, `/// <reference path>`.
const DECLARATION_SPECIFIER = /(?:\bfrom\s*|\bimport\(\s*|<reference path=)(['"])(\.{1,2}\/[^'"]*)\1/g;

/**
 * Keeps only the declarations an entry point reaches: the rest describe internals no user can import,
 * and would only weigh down the package. Returns the number removed.
 */
function pruneDeclarations(dir, entryFiles) {
  const reached = new Set();
  const pending = [...entryFiles];
  while (pending.length > 0) {
    const file = pending.pop();
    if (reached.has(file)) continue;
    reached.add(file);
    for (const [, , specifier] of fs.readFileSync(file, 'utf8').matchAll(DECLARATION_SPECIFIER)) {
      const base = path.resolve(path.dirname(file), specifier.replace(/\.js$/, ''));
      const target = [`${base}.d.ts`, path.join(base, 'index.d.ts'), base].find(
        (candidate) => candidate.endsWith('.d.ts') && fs.existsSync(candidate),
      );
      if (!target) throw new Error(`build: cannot resolve ${specifier} from ${path.relative(root, file)}`);
      pending.push(target);
    }
  }
  const unreached = walk(dir, (name) => name.endsWith('.d.ts')).filter((file) => !reached.has(file));
  for (const file of unreached) fs.rmSync(file);
  return unreached.length;
}

/** The declarations of dist/cjs, copied beside the ES module build with `.js` added to their specifiers. */
function copyDeclarations(from, to) {
  const files = walk(from, (name) => name.endsWith('.d.ts'));
  for (const file of files) {
    const target = path.join(to, path.relative(from, file));
    fs.writeFileSync(target, withExtensions(fs.readFileSync(file, 'utf8'), target));
  }
  return files.length;
}

execFileSync(process.execPath, [path.join(root, 'scripts', 'embed-lua.mjs'), '--check'], {
  stdio: 'inherit',
});
fs.rmSync(dist, { recursive: true, force: true });
await Promise.all([
  tsc('--outDir', 'dist/cjs', '--module', 'commonjs', '--declaration', 'false', '--removeComments'),
  tsc('--outDir', 'dist/esm', '--module', 'es2022', '--declaration', 'false', '--removeComments'),
  tsc('--outDir', 'dist/cjs', '--module', 'commonjs', '--emitDeclarationOnly'),
]);
writeJson(path.join(dist, 'cjs', 'package.json'), { type: 'commonjs' });
finishEsm(path.join(dist, 'esm'));
const pruned = pruneDeclarations(
  path.join(dist, 'cjs'),
  Object.values(ENTRY_POINTS).map((source) => path.join(dist, 'cjs', `${source}.d.ts`)),
);
const declarations = copyDeclarations(path.join(dist, 'cjs'), path.join(dist, 'esm'));
for (const [name, source] of Object.entries(ENTRY_POINTS)) {
  if (!fs.existsSync(path.join(dist, 'esm', `${source}.d.ts`))) {
    throw new Error(`build: entry point ${name}: no declarations for lib/${source}.ts`);
  }
}
fs.mkdirSync(path.join(dist, 'bin'), { recursive: true });
const binFile = path.join(dist, 'bin', `${BIN.name}.cjs`);
fs.writeFileSync(binFile, `#!/usr/bin/env node\n'use strict';\nrequire('../cjs/${BIN.source}.js');\n`);
fs.chmodSync(binFile, 0o755);
console.log(
  `build: dist/esm + dist/cjs, ${declarations} declarations each (${pruned} internal ones pruned), entry points ${Object.keys(ENTRY_POINTS).join(', ')}`,
);
