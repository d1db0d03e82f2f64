import { readdirSync, readFileSync } from 'node:fs';

/**
 * Pids of live processes whose environment contains `NAME=value` (Linux /proc). Children inherit
 * the environment, so a marker variable given to a process finds everything it started, however
 * deep: the way to prove that nothing outlived it.
 */
export function processesWithEnv(name: string, value: string): number[] {
  const needle = `${name}=${value}`;
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Zombies (state Z) have exited; only their parent has not reaped them yet.
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (environ.includes(needle) && state !== 'Z') pids.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return pids;
}
