#!/usr/bin/env node
// `npm run figures:copy [-- faults|topologies]`: the tests write their measured figures to .results/
// (ignored by git, so `npm test` leaves the tree clean). When a doc is updated from a run, this copies
// that run's figures to docs/figures/, where the docs link them:
//   .results/faults/latest.json        → docs/figures/faults/latest.json      (docs/RELIABILITY.md)
//   .results/topologies/<topology>.json → docs/figures/topologies/            (docs/TOPOLOGIES.md)
//   .results/console/console.png        → docs/figures/console/console.png    (docs/CONSOLE.md)
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const SETS = {
  faults: { from: '.results/faults', to: 'docs/figures/faults', doc: 'docs/RELIABILITY.md' },
  topologies: { from: '.results/topologies', to: 'docs/figures/topologies', doc: 'docs/TOPOLOGIES.md' },
  console: { from: '.results/console', to: 'docs/figures/console', doc: 'docs/CONSOLE.md', ext: '.png' },
};

const wanted = process.argv.slice(2);
for (const name of wanted) {
  if (!SETS[name]) {
    console.error(`figures:copy: unknown set "${name}" (known: ${Object.keys(SETS).join(', ')})`);
    process.exit(2);
  }
}

let copied = 0;
for (const [name, set] of Object.entries(SETS)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  const from = path.join(root, set.from);
  const files = fs.existsSync(from)
    ? fs.readdirSync(from).filter((file) => file.endsWith(set.ext ?? '.json'))
    : [];
  if (files.length === 0) {
    console.log(`figures:copy: ${name}: nothing in ${set.from}/ (run the suite first)`);
    continue;
  }
  fs.mkdirSync(path.join(root, set.to), { recursive: true });
  for (const file of files) {
    fs.copyFileSync(path.join(from, file), path.join(root, set.to, file));
    copied++;
  }
  console.log(`figures:copy: ${name}: ${files.join(', ')} → ${set.to}/ (update ${set.doc} to match)`);
}
if (wanted.length > 0 && copied === 0) process.exit(1);
