/*
 * Replays the read-write timeline that contention-worker.ts writes to a Redis list:
 * `+<r|w>:<token>:<uid>` when a section starts, `-<r|w>:<token>:<uid>` when it ends. Redis
 * serialises the pushes, so list order is real order across processes.
 */

/** What the timeline shows. */
export interface IntervalReport {
  reads: number;
  writes: number;
  /** Sections that started while a writer was inside, or writers that started while anyone was. */
  overlaps: string[];
  /** Most readers inside at once. */
  maxConcurrentReaders: number;
  /** Sections whose token did not exceed what it had to (see below). */
  tokenRegressions: string[];
  /** Sections that started and never ended, or ended without starting. */
  unbalanced: string[];
}

/**
 * A writer's token must exceed every token logged before it; a reader's must exceed the token of
 * every writer logged before it (readers granted together may log in either order).
 */
export function replayIntervals(log: readonly string[]): IntervalReport {
  const report: IntervalReport = {
    reads: 0,
    writes: 0,
    overlaps: [],
    maxConcurrentReaders: 0,
    tokenRegressions: [],
    unbalanced: [],
  };
  const readers = new Set<string>();
  const writers = new Set<string>();
  let maxToken = 0;
  let lastWriterToken = 0;
  for (const event of log) {
    const entry = event.slice(1);
    const [mode, tokenText] = entry.split(':');
    const token = Number(tokenText);
    if (event.startsWith('+')) {
      if (mode === 'w') {
        report.writes++;
        if (readers.size > 0 || writers.size > 0) report.overlaps.push(entry);
        if (!(token > maxToken)) report.tokenRegressions.push(entry);
        lastWriterToken = token;
        writers.add(entry);
      } else {
        report.reads++;
        if (writers.size > 0) report.overlaps.push(entry);
        if (!(token > lastWriterToken)) report.tokenRegressions.push(entry);
        readers.add(entry);
        report.maxConcurrentReaders = Math.max(report.maxConcurrentReaders, readers.size);
      }
      maxToken = Math.max(maxToken, token);
    } else if (!(mode === 'w' ? writers : readers).delete(entry)) {
      report.unbalanced.push(event);
    }
  }
  report.unbalanced.push(...[...readers, ...writers].map((e) => `+${e}`));
  return report;
}
