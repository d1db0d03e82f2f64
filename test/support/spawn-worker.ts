import { spawn } from 'child_process';
import * as path from 'path';
import { terminateProcess, trackChildPid, untrackChildPid } from './process-reaper';
import type { ExitStatus } from './redis-server-types';

/** Options for {@link spawnWorker}. */
export interface SpawnWorkerOptions {
  /** Added to (and overriding) the parent's environment; `undefined` removes a variable. */
  env?: Record<string, string | undefined>;
  /** Extra command-line arguments after the file. */
  args?: string[];
  /** Working directory; default the repository root. */
  cwd?: string;
}

/** A child Node process running a TypeScript file; stdout lines are JSON messages. */
export interface WorkerProcess<M = any> {
  readonly pid: number;
  /** Every JSON message received so far, in order. */
  readonly messages: readonly M[];
  readonly running: boolean;
  readonly paused: boolean;
  /** Settles when the process exits. */
  readonly exited: Promise<ExitStatus>;
  /** stdout lines that were not JSON. */
  stdoutNoise(): string[];
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Writes `message` to the worker's stdin as one JSON line. */
  send(message: unknown): void;
  /** Sends `signal` (default SIGKILL) as is. */
  kill(signal?: NodeJS.Signals): void;
  /** SIGSTOP: the worker freezes (event loop, timers, sockets). */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** SIGTERM (+SIGCONT if paused), SIGKILL after `graceMs`; resolves with the exit status. */
  stop(graceMs?: number): Promise<ExitStatus>;
  /**
   * Resolves with the first message matching `predicate` not already returned by an earlier
   * call (looking at past messages first). Rejects on timeout or if the worker exits first.
   */
  waitForMessage<T extends M = M>(predicate: (message: M) => boolean, timeoutMs?: number): Promise<T>;
}

interface Waiter<M> {
  predicate: (message: M) => boolean;
  resolve: (message: M) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

const REPO_ROOT = path.resolve(__dirname, '..', '..');
/** `node -r` this to run TypeScript: ts-node's transpile-only mode with a disk cache (see the file). */
export const TS_REGISTER = path.join(__dirname, 'ts-register.cjs');
/** The one folder of the worker scripts the specs spawn. */
export const WORKERS_DIR = path.join(__dirname, 'workers');

/** The path of the worker script `file` (in {@link WORKERS_DIR}). */
export function workerPath(file: string): string {
  return path.join(WORKERS_DIR, file);
}
const TAIL = 4096;

/**
 * Spawns `node -r test/support/ts-register.cjs <file>` with `options.env`. The child is
 * SIGKILLed if this process exits first (see process-reaper.ts). Call stop() or kill() when done.
 */
export function spawnWorker<M = any>(file: string, options: SpawnWorkerOptions = {}): WorkerProcess<M> {
  const child = spawn(process.execPath, ['-r', TS_REGISTER, path.resolve(file), ...(options.args ?? [])], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const messages: M[] = [];
  const consumed = new Set<number>();
  const noise: string[] = [];
  let waiters: Waiter<M>[] = [];
  let stderr = '';
  let partial = '';
  let alive = child.pid !== undefined;
  let paused = false;
  if (child.pid) trackChildPid(child.pid);

  const describe = (): string =>
    `worker ${path.basename(file)} (pid ${child.pid}); last messages: ` +
    `${JSON.stringify(messages.slice(-5))}; stderr: ${stderr.slice(-TAIL)}`;
  const settle = (waiter: Waiter<M>): void => {
    clearTimeout(waiter.timer);
    waiters = waiters.filter((w) => w !== waiter);
  };
  const deliver = (index: number): void => {
    const waiter = waiters.find((w) => w.predicate(messages[index]));
    if (!waiter) return;
    consumed.add(index);
    settle(waiter);
    waiter.resolve(messages[index]);
  };

  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines.filter((l) => l.trim())) {
      try {
        messages.push(JSON.parse(line) as M);
      } catch {
        noise.push(line);
        continue;
      }
      deliver(messages.length - 1);
    }
  });
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-64 * TAIL)));
  child.stdin?.on('error', () => undefined);

  const exited = new Promise<ExitStatus>((resolve) => {
    const onEnd = (status: ExitStatus): void => {
      alive = false;
      paused = false;
      if (child.pid) untrackChildPid(child.pid);
      child.stdin?.destroy();
      for (const waiter of [...waiters]) {
        settle(waiter);
        waiter.reject(
          new Error(`exited (code ${status.code}, signal ${status.signal}) first: ${describe()}`),
        );
      }
      resolve(status);
    };
    child.once('error', (error) => {
      stderr += `spawn error: ${error.message}\n`;
      onEnd({ code: null, signal: null });
    });
    // 'close' (not 'exit') so that every stdout line has been parsed before waiters are failed.
    child.once('close', (code, signal) => onEnd({ code, signal }));
  });

  const kill = (signal: NodeJS.Signals = 'SIGKILL'): void => {
    if (!alive) return;
    child.kill(signal);
    if (signal === 'SIGSTOP') paused = true;
    if (signal === 'SIGCONT') paused = false;
  };

  return {
    get pid() {
      return child.pid ?? -1;
    },
    messages,
    get running() {
      return alive;
    },
    get paused() {
      return paused;
    },
    exited,
    stdoutNoise: () => [...noise],
    stderr: () => stderr,
    send: (message) => {
      if (alive && child.stdin?.writable) child.stdin.write(`${JSON.stringify(message)}\n`);
    },
    kill,
    pause: () => kill('SIGSTOP'),
    resume: () => kill('SIGCONT'),
    stop: async (graceMs = 2000) => {
      if (alive) await terminateProcess(child, exited, graceMs);
      return exited;
    },
    waitForMessage: <T extends M = M>(predicate: (message: M) => boolean, timeoutMs = 10_000): Promise<T> => {
      const index = messages.findIndex((m, i) => !consumed.has(i) && predicate(m));
      if (index >= 0) {
        consumed.add(index);
        return Promise.resolve(messages[index] as T);
      }
      if (!alive) return Promise.reject(new Error(`already exited: ${describe()}`));
      return new Promise<T>((resolve, reject) => {
        const waiter: Waiter<M> = {
          predicate,
          resolve: resolve as (message: M) => void,
          reject,
          timer: setTimeout(() => {
            settle(waiter);
            reject(new Error(`no matching message within ${timeoutMs} ms: ${describe()}`));
          }, timeoutMs),
        };
        waiters.push(waiter);
      });
    },
  };
}
