/*
 * The fencing entries' names each have an entry in docs/API.md (as test/architecture/public-api.spec.ts
 * checks for the root and core entries), and package.json exports both.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as fencing from '../../lib/fencing';
import * as fencingNest from '../../lib/fencing/nest';

const ROOT = path.resolve(__dirname, '..', '..');

describe('the fencing entries', () => {
  const docs = fs.readFileSync(path.join(ROOT, 'docs', 'API.md'), 'utf8');

  it.each([
    ['nestjs-distributed-lock/fencing', fencing],
    ['nestjs-distributed-lock/fencing/nest', fencingNest],
  ])('every value %s exports has an entry in docs/API.md', (_entry, mod) => {
    expect(Object.keys(mod).filter((name) => !docs.includes(`\`${name}\``))).toEqual([]);
  });

  it('are package entries of their own', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(Object.keys(pkg.exports)).toEqual(expect.arrayContaining(['./fencing', './fencing/nest']));
  });
});
