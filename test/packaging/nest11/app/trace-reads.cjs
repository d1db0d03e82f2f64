// Preloaded into every app a toolchain cell starts (NODE_OPTIONS=--require): records each .lua file the
// process opens through node:fs into TRACE_READS_FILE. The package must embed its Lua scripts, so that a
// bundle runs with nothing beside it; scripts/test-toolchains.cjs fails a cell whose app opened one.
'use strict';
const fs = require('node:fs');

const out = process.env.TRACE_READS_FILE;
if (out) {
  const record = (file) => {
    const name = file instanceof URL ? file.pathname : String(file);
    if (/\.lua$/i.test(name)) fs.appendFileSync(out, `${name}\n`);
  };
  for (const method of ['readFileSync', 'openSync', 'readFile', 'open', 'createReadStream']) {
    const original = fs[method];
    fs[method] = function traced(file, ...rest) {
      record(file);
      return original.call(this, file, ...rest);
    };
  }
  for (const method of ['readFile', 'open']) {
    const original = fs.promises[method];
    fs.promises[method] = function traced(file, ...rest) {
      record(file);
      return original.call(this, file, ...rest);
    };
  }
}
