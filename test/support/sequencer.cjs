// Jest's order of spec files, with two hints for a cache that is cold or partly warm.
//
// Jest runs the files it has timed before longest first, and files it has never timed (a fresh clone, a
// CI machine) by size, largest first; when only some files are timed, it runs the untimed ones first and
// the timed ones last. A few small files start processes or topologies and run 15-60 s; started last,
// one of them holds up the end of the parallel step while the other workers idle. So:
//   1. a spec that says `@slow` in its first comment runs first among the files Jest has not timed;
//   2. a file Jest has timed at LONG_MS or more runs before the untimed rest, longest first. .ci/run's
//      server matrix (scripts/test-servers.cjs) runs some specs in the fresh clone before `npm test` does:
//      Jest had timed those alone, and put the 20-40 s ones (Sentinel, Cluster, failovers) at the very end
//      of their step (fresh-clone CI run, 2026-11-30: the unit + redis step ended with them).
// Once Jest has timed every file, its order stands, as before.
'use strict';
const fs = require('node:fs');
const Sequencer = require('@jest/test-sequencer').default;

const FIRST_COMMENT = /\/\*[\s\S]*?\*\//;
/** A file Jest has timed at this or more (ms) runs before the files it has not timed. */
const LONG_MS = 8_000;

class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const ordered = super.sort(tests);
    const failed = ordered.filter((test) => this.hasFailed(test));
    const hinted = ordered.filter(
      (test) => !this.hasFailed(test) && test.duration == null && isSlow(test.path),
    );
    const long = ordered
      .filter((test) => !this.hasFailed(test) && test.duration != null && test.duration >= LONG_MS)
      .sort((a, b) => b.duration - a.duration);
    const rest = ordered.filter(
      (test) => !failed.includes(test) && !hinted.includes(test) && !long.includes(test),
    );
    return [...failed, ...hinted, ...long, ...rest];
  }
}

/** Whether the file's first comment carries `@slow`. */
function isSlow(file) {
  const comment = FIRST_COMMENT.exec(fs.readFileSync(file, 'utf8').slice(0, 4000));
  return comment !== null && /@slow\b/.test(comment[0]);
}

module.exports = SlowFirstSequencer;
