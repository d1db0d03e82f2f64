// `node -r test/support/ts-register.cjs file.ts`: how the specs' worker processes load TypeScript.
//
// What ts-node/register/transpile-only does (each file transpiled on its own), with SWC and the
// options the Jest projects use (swc-options.cjs), plus a disk cache of the output keyed by the file's
// content. A worker loads some 170 files of lib/; every one of the suite's hundreds of worker processes
// would transpile them again. With the cache, only the first process after a change pays. The cache
// lives in node_modules/.cache/ (outside the tracked tree, gone with a fresh clone); an entry is never
// stale, since its name is a hash of the source, the options and the SWC version.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'test-ts-register');
const { swcOptions } = require('./swc-options.cjs');

const swcVersion = require('@swc/core/package.json').version;
const options = swcOptions('commonjs');
const optionsKey = `${swcVersion}\0${JSON.stringify(options)}`;

function transpile(source, filename) {
  const key = crypto.createHash('sha256').update(optionsKey).update('\0').update(filename);
  const cached = path.join(CACHE, `${key.update('\0').update(source).digest('hex')}.js`);
  try {
    return fs.readFileSync(cached, 'utf8');
  } catch {
    // not cached yet
  }
  const output = require('@swc/core').transformSync(source, { ...options, filename }).code;
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
