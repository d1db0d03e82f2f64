// `node -r test/support/ts-register.cjs file.ts`: how the specs' worker processes load TypeScript.
//
// What ts-node/register/transpile-only does (each file transpiled on its own with the repository's
// tsconfig.json), plus a disk cache of the output keyed by the file's content. A worker loads some 170
// files of lib/; transpiling them took 3 s of CPU per process on the 2-core machine, paid again by
// every one of the suite's hundreds of worker processes. With the cache, only the first process after
// a change pays. The cache lives in node_modules/.cache/ (outside the tracked tree, gone with a fresh
// clone); an entry is never stale, since its name is a hash of the source, the compiler options and
// the TypeScript version.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'test-ts-register');
const TSCONFIG = path.join(ROOT, 'tsconfig.json');

let ts;
let compilerOptions;
/** The compiler and the options of tsconfig.json, loaded on the first cache miss only. */
function compiler() {
  if (!ts) {
    ts = require('typescript');
    const { config, error } = ts.readConfigFile(TSCONFIG, ts.sys.readFile);
    if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
    compilerOptions = {
      ...ts.convertCompilerOptionsFromJson(config.compilerOptions, ROOT).options,
      module: ts.ModuleKind.CommonJS,
      declaration: false,
      sourceMap: false,
      inlineSourceMap: true,
      inlineSources: true,
    };
  }
  return { ts, compilerOptions };
}

const typescriptVersion = require('typescript/package.json').version;
const optionsKey = `${typescriptVersion}\0${fs.readFileSync(TSCONFIG, 'utf8')}`;

function transpile(source, filename) {
  const key = crypto.createHash('sha256').update(optionsKey).update('\0').update(filename);
  const cached = path.join(CACHE, `${key.update('\0').update(source).digest('hex')}.js`);
  try {
    return fs.readFileSync(cached, 'utf8');
  } catch {
    // not cached yet
  }
  const { ts: tsc, compilerOptions: options } = compiler();
  const output = tsc.transpileModule(source, { fileName: filename, compilerOptions: options }).outputText;
  // Write then rename: workers started together may transpile the same file; none reads half a file.
  fs.mkdirSync(CACHE, { recursive: true });
  const partial = `${cached}.${process.pid}.tmp`;
  fs.writeFileSync(partial, output);
  fs.renameSync(partial, cached);
  return output;
}

require.extensions['.ts'] = function loadTypeScript(module, filename) {
  module._compile(transpile(fs.readFileSync(filename, 'utf8'), filename), filename);
};
