/*
 * What README.md and docs/ say about loading, peers and versions, held against package.json and lib/:
 *
 * - the optional peers lib/ loads lazily (a literal `require('<name>')`) are all among the ones
 *   docs/PACKAGING.md lists as loaded when a feature needs them, and each is an optional peer;
 * - no doc says an optional peer is found from the working directory (they resolve from where the package
 *   is installed: every paragraph that ties peers or createRequire to the working directory says "not");
 * - every version a doc names for an optional peer ("optional peer `x` (14 or 15)") is in its peer range;
 * - every "Node ≥ x" is a floor of `engines` (or Nest 12's own Node 22), every "Nest ≥ x" / "NestJS ≥ x"
 *   the lowest @nestjs/core major of the peer range, every "Redis ≥ x" the one floor the README states;
 * - "NestJS 10, 11 and 12" in docs/PACKAGING.md names exactly the peer range's majors.
 */
import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.resolve(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const DOCS = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

function libFiles(dir = path.join(ROOT, 'lib')): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return libFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The majors a semver range admits by its alternatives: '^14.0.0 || ^15.0.0' → [14, 15]. */
function rangeMajors(range: string): number[] {
  return range.split('||').map((part) => Number(/(\d+)/.exec(part)![1]));
}

/** The paragraphs (blank-line separated) of every doc. */
function paragraphs(): { file: string; text: string }[] {
  return DOCS.flatMap((file) =>
    read(file)
      .split(/\n\s*\n/)
      .map((text) => ({ file, text })),
  );
}

describe('what the docs say about loading, peers and versions', () => {
  it('names in docs/PACKAGING.md every optional peer lib/ loads lazily, each an optional peer', () => {
    const required = new Set<string>();
    for (const file of libFiles()) {
      for (const match of fs.readFileSync(file, 'utf8').matchAll(/require\('([^.<'][^']*)'\)/g)) {
        required.add(match[1]!);
      }
    }
    const packaging = read('docs/PACKAGING.md');
    const section = packaging.slice(packaging.indexOf('## Optional peers'));
    const listed = section.slice(0, section.indexOf('are loaded the first time'));
    const named = new Set([...listed.matchAll(/`?(@?[a-z][\w.-]*(?:\/[\w.-]+)?)`?/g)].map((m) => m[1]!));
    const glide = '@valkey/valkey-glide'; // PACKAGING.md says "Valkey GLIDE's batch classes"
    for (const name of required) {
      expect({ name, listed: name === glide ? /Valkey GLIDE/.test(listed) : named.has(name) }).toEqual({
        name,
        listed: true,
      });
      expect({ name, optional: pkg.peerDependenciesMeta[name]?.optional }).toEqual({ name, optional: true });
    }
    expect(required.size).toBeGreaterThanOrEqual(8);
  });

  it('never says an optional peer is found from the working directory', () => {
    const wrong = paragraphs().filter(
      ({ text }) =>
        /working directory|cwd/i.test(text) &&
        /optional peer|createRequire|resolves? from|are found/i.test(text) &&
        !/not from the working directory|any working directory/i.test(text),
    );
    expect(wrong.map(({ file, text }) => `${file}: ${text.slice(0, 160)}`)).toEqual([]);
  });

  it('names only peer versions that the peer ranges admit', () => {
    const claims = DOCS.flatMap((file) =>
      [...read(file).matchAll(/optional peer `([^`]+)` \(([^)]*)\)/g)].map((m) => ({
        file,
        peer: m[1]!,
        versions: m[2]!,
      })),
    );
    expect(claims.length).toBeGreaterThanOrEqual(3);
    for (const { file, peer, versions } of claims) {
      const range = pkg.peerDependencies[peer];
      expect({ file, peer, inPeerDependencies: range !== undefined }).toEqual({
        file,
        peer,
        inPeerDependencies: true,
      });
      const majors = [...versions.matchAll(/\^?(\d+)(?:\.\d+)*/g)].map((m) => Number(m[1]));
      for (const major of majors) {
        expect({ file, peer, major, admitted: rangeMajors(range!).includes(major) }).toEqual({
          file,
          peer,
          major,
          admitted: true,
        });
      }
    }
  });

  it('states the Node, Nest and Redis floors that package.json and the README hold', () => {
    const nodeFloors = pkg.engines.node.match(/\d+\.\d+/g)!; // '^20.19.0 || >=22.12.0' → 20.19, 22.12
    const nestFloor = Math.min(...rangeMajors(pkg.peerDependencies['@nestjs/core']!));
    const redisFloor = /\| Redis +\| Redis ≥ (\d+\.\d+)/.exec(read('README.md'))![1];
    const problems: string[] = [];
    for (const file of DOCS) {
      for (const line of read(file).split('\n')) {
        for (const m of line.matchAll(/\bNode\b\W{0,4}(?:≥|>=)\s*(\d+(?:\.\d+)?)/g)) {
          const ok =
            nodeFloors.includes(m[1]!) || (m[1] === '22' && /Nest(JS)? 12|@nestjs\/common`? 12/.test(line));
          if (!ok) problems.push(`${file}: Node ≥ ${m[1]} (engines: ${pkg.engines.node}): ${line.trim()}`);
        }
        for (const m of line.matchAll(/\bNest(?:JS)?\b\W{0,4}(?:≥|>=)\s*(\d+)/g)) {
          if (Number(m[1]) !== nestFloor) problems.push(`${file}: Nest ≥ ${m[1]} (peer floor ${nestFloor})`);
        }
        for (const m of line.matchAll(/\bRedis\b\W{0,4}(?:≥|>=)\s*(\d+(?:\.\d+)?)/g)) {
          if (m[1] !== redisFloor) problems.push(`${file}: Redis ≥ ${m[1]} (README: ${redisFloor})`);
        }
      }
    }
    expect(problems).toEqual([]);
    const nestMajors = /\*\*NestJS ([\d, and]+)\.\*\*/.exec(read('docs/PACKAGING.md'))![1]!;
    expect(nestMajors.match(/\d+/g)!.map(Number)).toEqual(rangeMajors(pkg.peerDependencies['@nestjs/core']!));
    expect(read('docs/MIGRATION.md')).toMatch(/NestJS ≥ 10\*\*.*\*\*Node ≥ 20\.19\*\*.*\n?.*Redis ≥ 6\.2/s);
  });
});
