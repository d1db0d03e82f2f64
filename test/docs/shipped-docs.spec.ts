import * as fs from 'fs';
import * as path from 'path';

/*
 * The Markdown files the package ships (package.json "files", expanded) are read by users in the
 * tarball and on the registry, where the repository's test files and issue tracker are not at hand:
 *
 * - no shipped .md names a test file or folder (`test/…`) or an issue number (`issue 23`, `#23`);
 * - every relative link resolves to a file of the repository, and a link to a file the package does not
 *   ship goes to a document or figure under docs/ (ARCHITECTURE.md, figures/…) or to CHANGELOG.md.
 *
 * Why links to repository-only docs are kept rather than refused: package.json has no "repository" URL
 * to make them absolute with, and those pages (what is guaranteed, how it works, the benchmarks) are
 * worth a link on GitHub and in a clone, where they resolve. In the tarball they do not. Once
 * package.json names a repository, these links should become absolute URLs and this spec should refuse
 * relative links to unshipped files outright.
 */
const ROOT = path.resolve(__dirname, '..', '..');

const TEST_PATH = /\btest\/[\w./-]+/g;
const ISSUE_NUMBER = /\bissue \d+|#\d+\b/gi;

/** Repository-relative paths of every file the package ships, from package.json "files". */
function shippedFiles(): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { files: string[] };
  const found = new Set<string>();
  const walk = (rel: string): void => {
    const full = path.join(ROOT, rel);
    if (!fs.existsSync(full)) return;
    if (fs.statSync(full).isDirectory()) {
      for (const name of fs.readdirSync(full)) walk(path.posix.join(rel, name));
    } else {
      found.add(rel);
    }
  };
  for (const entry of pkg.files) {
    if (!entry.includes('*')) {
      walk(entry);
      continue;
    }
    // One wildcard level, as "docs/*.md": the folder's files whose names match.
    const dir = path.posix.dirname(entry);
    const pattern = new RegExp(
      `^${path.posix
        .basename(entry)
        .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '[^/]*')}$`,
    );
    for (const name of fs.existsSync(path.join(ROOT, dir)) ? fs.readdirSync(path.join(ROOT, dir)) : []) {
      if (pattern.test(name)) walk(path.posix.join(dir, name));
    }
  }
  // npm always packs these, whatever "files" says.
  for (const always of ['package.json', 'README.md', 'LICENSE']) {
    if (fs.existsSync(path.join(ROOT, always))) found.add(always);
  }
  return [...found].sort();
}

const shipped = shippedFiles();
const shippedDocs = shipped.filter((file) => file.endsWith('.md'));

/** `line N: text` of each match of `pattern` in `file`, outside fenced code blocks too. */
function mentions(file: string, pattern: RegExp): string[] {
  const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  return lines.flatMap((line, i) =>
    [...line.matchAll(pattern)].map((match) => `${file}:${i + 1}: ${match[0]}`),
  );
}

/**
 * The relative link targets of `file`: `[text](target)` and `![alt](target)`, anchors dropped; code
 * (fenced blocks and inline spans) is not Markdown and holds no links.
 */
function relativeLinks(file: string): { line: number; target: string }[] {
  const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const links: { line: number; target: string }[] = [];
  let fenced = false;
  lines.forEach((line, i) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) return;
    const text = line.replace(/(`+)[\s\S]*?\1/g, '');
    for (const match of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
      links.push({ line: i + 1, target: target.split('#')[0]! });
    }
  });
  return links;
}

describe('the Markdown files the package ships', () => {
  it('include the user docs', () => {
    expect(shippedDocs).toEqual(expect.arrayContaining(['README.md', 'docs/API.md', 'docs/TESTING.md']));
  });

  it.each(shippedDocs)('%s names no test file', (file) => {
    expect(mentions(file, TEST_PATH)).toEqual([]);
  });

  it.each(shippedDocs)('%s cites no issue number', (file) => {
    expect(mentions(file, ISSUE_NUMBER)).toEqual([]);
  });

  it.each(shippedDocs)(
    '%s links only to files that exist, and to unshipped files only under docs/',
    (file) => {
      const bad = relativeLinks(file).flatMap(({ line, target }) => {
        const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), target));
        if (!fs.existsSync(path.join(ROOT, resolved))) return [`${file}:${line}: ${target} does not exist`];
        const isShipped = shipped.some(
          (f) => f === resolved || f.startsWith(`${resolved.replace(/\/$/, '')}/`),
        );
        if (!isShipped && !resolved.startsWith('docs/') && resolved !== 'CHANGELOG.md') {
          return [
            `${file}:${line}: ${target} is not shipped, not a repository doc under docs/ nor CHANGELOG.md`,
          ];
        }
        return [];
      });
      expect(bad).toEqual([]);
    },
  );
});
