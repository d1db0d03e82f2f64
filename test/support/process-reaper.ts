import { spawn, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { hostProcess, processSingleton } from './host-process';

/*
 * Two safety nets so that no redis-server or worker outlives the test process:
 * 1. a synchronous SIGKILL of every tracked pid on the host process's `exit` event;
 * 2. a detached `sh` watchdog that reads "+pid"/"-pid" lines on stdin and SIGKILLs whatever is
 *    still tracked when stdin closes, i.e. when this process dies in any way, even by SIGKILL.
 * Both also delete this process's harness temp directory, under which every server keeps its dir.
 * The registry lives on the host process, so every Jest module registry shares one of each.
 */

const WATCHDOG_SCRIPT = `
trap '' INT TERM HUP
pids=" "
while read -r line; do
  case "$line" in
    +*) pids="$pids\${line#+} " ;;
    -*) p="\${line#-}"
        case "$pids" in *" $p "*) pids="\${pids%% $p *} \${pids#* $p }" ;; esac ;;
  esac
done
for p in $pids; do kill -9 "$p" 2>/dev/null; done
rm -rf "$1"
`;

interface Reaper {
  pids: Set<number>;
  /** Created on first use by makeTempDir(). */
  tempDir: string;
  watchdog?: ChildProcess;
}

const reaper = processSingleton<Reaper>('process-reaper', () => {
  const suffix = Math.random().toString(36).slice(2, 8);
  const state: Reaper = {
    pids: new Set(),
    tempDir: path.join(os.tmpdir(), `ndl-test-${hostProcess.pid}-${suffix}`),
  };
  hostProcess.on('exit', () => {
    for (const pid of state.pids) {
      try {
        hostProcess.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    state.pids.clear();
    fs.rmSync(state.tempDir, { recursive: true, force: true });
  });
  return state;
});

/** Starts a watchdog and tells it every pid tracked so far. */
function startWatchdog(): void {
  try {
    const child = spawn('sh', ['-c', WATCHDOG_SCRIPT, 'ndl-reaper', reaper.tempDir], {
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    child.on('error', () => undefined);
    child.stdin?.on('error', () => undefined);
    child.unref();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    reaper.watchdog = child;
    for (const pid of reaper.pids) child.stdin?.write(`+${pid}\n`);
  } catch {
    // no sh: the exit handler remains
  }
}

/** Registers a child pid to be SIGKILLed if this process exits (normally or not) before it. */
export function trackChildPid(pid: number): void {
  reaper.pids.add(pid);
  const stdin = reaper.watchdog?.stdin;
  if (stdin?.writable) stdin.write(`+${pid}\n`);
  else startWatchdog();
}

/** Forgets a pid once its process has exited (so a reused pid is never killed). */
export function untrackChildPid(pid: number): void {
  if (!reaper.pids.delete(pid)) return;
  const w = reaper.watchdog;
  if (w?.stdin?.writable) w.stdin.write(`-${pid}\n`);
}

/** A fresh directory inside this process's harness temp dir (deleted at exit at the latest). */
export function makeTempDir(prefix: string): string {
  if (!reaper.watchdog?.stdin?.writable) startWatchdog();
  fs.mkdirSync(reaper.tempDir, { recursive: true, mode: 0o700 });
  return fs.mkdtempSync(path.join(reaper.tempDir, prefix));
}

/** Pids currently tracked in this OS process (for diagnostics and self-tests). */
export function trackedChildPids(): number[] {
  return [...reaper.pids];
}

/** SIGTERM (plus SIGCONT, in case it is stopped), then SIGKILL if still alive after `graceMs`. */
export async function terminateProcess(
  child: ChildProcess,
  exited: Promise<unknown>,
  graceMs: number,
): Promise<void> {
  child.kill('SIGTERM');
  child.kill('SIGCONT');
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<'grace'>((resolve) => (timer = setTimeout(() => resolve('grace'), graceMs)));
  const first = await Promise.race([exited, grace]);
  clearTimeout(timer);
  if (first === 'grace') {
    child.kill('SIGKILL');
    await exited;
  }
}
