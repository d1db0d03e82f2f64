#!/usr/bin/env node
// CHANGELOG.md and the package version, kept together (Keep a Changelog: entries are written under
// `## [Unreleased]` with each change; a release turns them into `## [x.y.z] — date`).
//
//   node scripts/changelog.mjs check [--tag vX.Y.Z]
//       (npm run check; the release workflow with the pushed tag) package.json's version has its own
//       section in CHANGELOG.md, with entries, and it is the newest one; no section names a later version;
//       with --tag, the tag is exactly v<version>. Exits 1 and says why otherwise.
//   node scripts/changelog.mjs release
//       (npm's `version` script, run by `npm version <major|minor|patch>` after it set the new version and
//       before it commits and tags) moves the entries under [Unreleased] into a section for the new version,
//       dated today, and leaves [Unreleased] with its opening paragraph only. Refuses (exit 1) when
//       [Unreleased] has no entries: a release cannot be cut without one. `preversion` runs the same test
//       first (`release --dry-run`), before npm touches package.json.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CHANGELOG = path.join(root, 'CHANGELOG.md');
const UNRELEASED = '## [Unreleased]';
/** `## [0.3.0] — 2026-11-28` (an en or em dash, or a hyphen); the date is optional for old sections. */
const SECTION = /^## \[(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\](?:\s+[—–-]\s+(\d{4}-\d{2}-\d{2}))?\s*$/;

/** The changelog cut into its sections: [{ heading, version, date, lines }], the text before the first. */
function parse(text) {
  const lines = text.split('\n');
  const sections = [];
  const head = [];
  for (const line of lines) {
    if (line.startsWith('## ')) {
      const match = SECTION.exec(line);
      if (!match && line.trim() !== UNRELEASED)
        throw new Error(`CHANGELOG.md: a heading it cannot read: "${line}"`);
      sections.push({ heading: line, version: match?.[1], date: match?.[2], lines: [] });
    } else if (sections.length > 0) sections.at(-1).lines.push(line);
    else head.push(line);
  }
  return { head, sections };
}

/** An entry: a list item or a `###` group heading. Prose alone (e.g. [Unreleased]'s opening) is none. */
const isEntry = (line) => /^(- |\* |### )/.test(line);

function compare(a, b) {
  const [x, y] = [a, b].map((v) => v.split(/[.-]/).slice(0, 3).map(Number));
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}

function version() {
  return JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version;
}

function check(tag) {
  const problems = [];
  const current = version();
  const { sections } = parse(fs.readFileSync(CHANGELOG, 'utf8'));
  if (sections[0]?.heading.trim() !== UNRELEASED) problems.push(`the first section is not "${UNRELEASED}"`);
  const released = sections.filter((s) => s.version);
  const own = released.find((s) => s.version === current);
  if (!own) problems.push(`no "## [${current}] — <date>" section for package.json's version ${current}`);
  else {
    if (!own.lines.some(isEntry)) problems.push(`the ${current} section has no entries`);
    if (!own.date) problems.push(`the ${current} section has no date ("## [${current}] — YYYY-MM-DD")`);
    if (released[0] !== own) problems.push(`the ${current} section is not the newest released one`);
  }
  const later = released.filter((s) => compare(s.version, current) > 0).map((s) => s.version);
  if (later.length > 0) problems.push(`sections for versions later than ${current}: ${later.join(', ')}`);
  if (tag !== undefined && tag !== `v${current}`) problems.push(`the tag ${tag} is not v${current}`);
  if (problems.length > 0) {
    console.error(`CHANGELOG.md and package.json disagree:\n  - ${problems.join('\n  - ')}`);
    process.exit(1);
  }
  console.log(`CHANGELOG.md has the ${current} section${tag ? ` for the tag ${tag}` : ''}`);
}

function release(dryRun) {
  const text = fs.readFileSync(CHANGELOG, 'utf8');
  const { head, sections } = parse(text);
  const unreleased = sections[0];
  if (unreleased?.heading.trim() !== UNRELEASED)
    throw new Error(`CHANGELOG.md: no "${UNRELEASED}" section first`);
  const first = unreleased.lines.findIndex(isEntry);
  if (first < 0) {
    console.error(
      `CHANGELOG.md: nothing under ${UNRELEASED}; write what this release changes for users first`,
    );
    process.exit(1);
  }
  if (dryRun) return console.log(`CHANGELOG.md: ${UNRELEASED} has entries`);
  const next = version();
  if (sections.some((s) => s.version === next)) throw new Error(`CHANGELOG.md already has a ${next} section`);
  const opening = unreleased.lines.slice(0, first);
  const entries = unreleased.lines.slice(first);
  const today = new Date().toISOString().slice(0, 10);
  const out = [
    ...head,
    unreleased.heading,
    ...opening,
    `## [${next}] — ${today}`,
    '',
    ...entries,
    ...sections.slice(1).flatMap((s) => [s.heading, ...s.lines]),
  ];
  fs.writeFileSync(CHANGELOG, out.join('\n'));
  console.log(`CHANGELOG.md: ${UNRELEASED} is now ${next} (${today})`);
}

const [command, ...rest] = process.argv.slice(2);
const tagAt = rest.indexOf('--tag');
if (command === 'check') check(tagAt >= 0 ? rest[tagAt + 1] : undefined);
else if (command === 'release') release(rest.includes('--dry-run'));
else {
  console.error('usage: node scripts/changelog.mjs check [--tag vX.Y.Z] | release [--dry-run]');
  process.exit(2);
}
