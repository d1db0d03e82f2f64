// Jest resolver of the `nest12` project (jest.config.js; last step of `npm run test:packed`): runs the Nest-layer and e2e specs,
// unchanged, on NestJS 12 and on the PACKED library instead of lib/.
//   - `../../lib` (the public barrel, all the specs import) → `nestjs-distributed-lock` as installed
//     from the tarball in test/packaging/nest12/node_modules; `lib/core/public`, `lib/testing`, `lib/terminus`,
//     `lib/observability`, `lib/console`, `lib/fencing`, `lib/fencing/nest` → `nestjs-distributed-lock/<entry>` (lib/core itself is the internal barrel).
//   - @nestjs/*, rxjs, reflect-metadata and ioredis → test/packaging/nest12/node_modules (Nest 12), so the specs,
//     the sample app and the library share one copy of Nest.
// Any other import of a file under lib/ fails loudly: it would bypass the packed build.
'use strict';
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..', '..');
const LIB = path.join(ROOT, 'lib');
const NEST12 = path.join(ROOT, 'test', 'packaging', 'nest12');
/** The package's public subpath entry points (package.json exports, scripts/build.mjs ENTRY_POINTS). */
const SUBPATHS = {
  core: 'core/public',
  testing: 'testing',
  terminus: 'terminus',
  observability: 'observability',
  console: 'console',
  fencing: 'fencing',
  'fencing/nest': 'fencing/nest',
};
const REDIRECTED =
  /^(@nestjs\/|rxjs(\/|$)|reflect-metadata(\/|$)|ioredis(\/|$)|nestjs-distributed-lock(\/|$))/;

module.exports = function resolve(request, options) {
  if (request.startsWith('.')) {
    const target = path.resolve(options.basedir, request);
    if (target === LIB || target === path.join(LIB, 'index'))
      return resolve('nestjs-distributed-lock', options);
    for (const [entry, source] of Object.entries(SUBPATHS)) {
      if (target === path.join(LIB, source) || target === path.join(LIB, source, 'index')) {
        return resolve(`nestjs-distributed-lock/${entry}`, options);
      }
    }
    if (target.startsWith(LIB + path.sep)) {
      throw new Error(
        `the Nest 12 run uses the packed build: ${request} (from ${options.basedir}) is not a public entry point`,
      );
    }
  } else if (REDIRECTED.test(request) && !options.basedir.startsWith(NEST12 + path.sep)) {
    return options.defaultResolver(request, { ...options, basedir: NEST12 });
  }
  return options.defaultResolver(request, options);
};
