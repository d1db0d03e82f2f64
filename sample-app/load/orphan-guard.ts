import { spawn } from 'node:child_process';

/*
 * A process we start must not outlive us, even if we die by SIGKILL and no handler runs. The
 * guard is a tiny detached `sh` that reads our pipe: when the pipe closes without "done" (we died),
 * it SIGKILLs the child. Detached, so Ctrl-C on the terminal does not take the guard down first.
 */
const GUARD_SCRIPT = 'while read -r line; do [ "$line" = done ] && exit 0; done; kill -9 "$1" 2>/dev/null';

/** Handle of one guard. */
export interface OrphanGuard {
  /** Stands the guard down (call once the child has exited normally, so a reused pid is never killed). */
  release(): void;
}

/** Kills `pid` if this process dies before release() is called. A no-op where `sh` is missing. */
export function guardAgainstOrphan(pid: number): OrphanGuard {
  let guard: ReturnType<typeof spawn> | undefined;
  try {
    guard = spawn('sh', ['-c', GUARD_SCRIPT, 'orphan-guard', String(pid)], {
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    guard.on('error', () => undefined);
    guard.stdin?.on('error', () => undefined);
    guard.unref();
    (guard.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  } catch {
    guard = undefined;
  }
  return {
    release: () => {
      if (guard?.stdin?.writable) guard.stdin.end('done\n');
    },
  };
}
