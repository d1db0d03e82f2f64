#!/usr/bin/env node
// Part of `npm run build`: tsc emits only .js/.d.ts, but the engine reads its Lua scripts at run time
// from next to its compiled files (lib/core/scripts/*.lua → dist/core/scripts/*.lua). Copies every
// .lua file under lib/ to the same relative path under dist/.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const from = path.join(root, 'lib');
const to = path.join(root, 'dist');

function luaFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return luaFiles(full);
    return entry.isFile() && entry.name.endsWith('.lua') ? [full] : [];
  });
}

const files = luaFiles(from);
if (files.length === 0) {
  console.error('copy-lua: no .lua files found under lib/');
  process.exit(1);
}
for (const file of files) {
  const target = path.join(to, path.relative(from, file));
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.copyFileSync(file, target);
}
console.log(`copy-lua: copied ${files.length} Lua scripts to dist/`);
