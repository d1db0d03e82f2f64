import type { BenchResults } from './results';
import { shareDeviation } from '../scenarios/figures';
import { round } from '../stats';
import { table } from './markdown-table';
import { renderPairedContention } from './paired-contention-table';
import { renderScaleHttpAndTargets } from './scale-http-targets-tables';

/** Every table of a run, as Markdown sections. */
export function renderTables(r: BenchResults): string {
  const out: string[] = [];
  const libs = r.libraries;
  if (libs.length) {
    const callers = libs[0]!.uncontended.map((u) => u.callers);
    out.push(
      `### Uncontended acquire + release (one op = acquire, then release; median of ${libs[0]!.uncontended[0]?.trialsOpsPerSec.length ?? 1} trials taken round-robin across libraries)\n`,
    );
    out.push(
      table(
        [
          'library',
          ...callers.flatMap((c) => [
            `${c} caller${c > 1 ? 's' : ''}: ops/s`,
            'p50 ms',
            'p99 ms',
            'cmds/op',
            'client CPU µs/op',
            'Redis CPU µs/op',
          ]),
        ],
        libs.map((l) => [
          l.name,
          ...l.uncontended.flatMap((u) => [
            u.opsPerSec,
            u.p50Ms,
            u.p99Ms,
            u.cmdsPerOp,
            u.clientCpuUsPerOp ?? '–',
            u.cpuUsPerOp,
          ]),
        ]),
      ),
    );
    const csList = libs[0]!.contention.map((c) => c.csMs);
    const contended = libs.filter((l) => l.contention.length > 0);
    for (const cs of csList) {
      out.push(
        `\n### Contention: ${callersLabel(r)} on one key, critical section ${cs} ms (GET → ${cs} ms → SET)\n`,
      );
      out.push(
        table(
          [
            'library',
            'acq/s',
            'wait p50 ms',
            'p99 ms',
            'max ms',
            'cmds/acq',
            'round trips/acq',
            'client CPU µs/acq',
            'Redis CPU µs/acq',
            'lost',
            'failed',
            'acq per process',
            'share dev %',
            'longest run',
            'mean run',
            'hand-offs/acq',
          ],
          [
            ...contended.map((l) => {
              const c = l.contention.find((x) => x.csMs === cs);
              if (!c) return [l.name];
              return [
                l.name,
                c.acqPerSec,
                c.wait.p50,
                c.wait.p99,
                c.wait.max,
                c.cmdsPerAcq,
                c.clientCmdsPerAcq,
                c.clientCpuUsPerAcq ?? '–',
                c.cpuUsPerAcq,
                c.lostUpdates,
                c.failed,
                c.perProcess.join('/'),
                round((c.shareDeviation ?? shareDeviation(c.perProcess)) * 100),
                c.grantOrder ? `${c.grantOrder.longestRun}${c.grantOrder.exact ? '' : ' (approx.)'}` : '–',
                c.grantOrder?.meanRun ?? '–',
                c.handOffsPerAcq ?? '–',
              ];
            }),
            ...(r.floor ?? [])
              .filter((f) => f.csMs === cs)
              .map((f) => [
                '(critical section alone, in-process mutex)',
                f.acqPerSec ?? '',
                '',
                '',
                '',
                f.cmdsPerAcq,
                0,
                f.cpuUsPerAcq,
                '',
                '',
                '',
                '',
                '',
                '',
                '',
              ]),
          ],
        ),
      );
    }
    out.push(
      '\ncmds/acq: INFO commandstats delta / acquisitions, commands run inside Lua scripts included, the critical ' +
        "section's own GET + SET (2/acq) included. round trips/acq: commands the lock clients sent, counter GET/SET excluded. " +
        "Wait percentiles include failed acquisitions. share dev: largest deviation of a process' share of the " +
        'acquisitions from an equal share. longest / mean run: consecutive grants to one process, read from the counter ' +
        'values each critical section wrote (no extra command), over the grants during which every process was acquiring. ' +
        "hand-offs/acq: grants passed on inside a process without Redis (this library's cohorts, from its `acquired` " +
        'events). The last row runs the same critical sections one at a time with no ' +
        "Redis lock at all: the part of every library's Redis CPU that no lock can remove.",
    );
    out.push(...renderPairedContention(r));
  }
  out.push(...renderScaleHttpAndTargets(r));
  return out.join('\n');
}

function callersLabel(r: BenchResults): string {
  const c = r.meta.contention;
  return `${c.processes * c.callersPerProcess} callers in ${c.processes} processes`;
}
