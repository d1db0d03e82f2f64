// Jest's order of spec files, with one hint for a cold cache.
//
// Jest runs the files it has timed before longest first, and files it has never timed (a fresh clone, a
// CI machine) by size, largest first. A few small files start processes or topologies and run 15-60 s;
// started last, one of them holds up the end of the parallel step while the other workers idle. A spec
// that says `@slow` in its first comment runs first among the files Jest has not timed. Once Jest has
// timed a file, its time decides, as before.
'use strict';
const fs = require('node:fs');
const Sequencer = require('@jest/test-sequencer').default;

const FIRST_COMMENT = /\/\*[\s\S]*?\*\//;

class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const ordered = super.sort(tests);
    const failed = ordered.filter((test) => this.hasFailed(test));
    const hinted = ordered.filter(
      (test) => !this.hasFailed(test) && test.duration == null && isSlow(test.path),
    );
    const rest = ordered.filter((test) => !failed.includes(test) && !hinted.includes(test));
    return [...failed, ...hinted, ...rest];
  }
}

/** Whether the file's first comment carries `@slow`. */
function isSlow(file) {
  const comment = FIRST_COMMENT.exec(fs.readFileSync(file, 'utf8').slice(0, 4000));
  return comment !== null && /@slow\b/.test(comment[0]);
}

module.exports = SlowFirstSequencer;
