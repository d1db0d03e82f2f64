import cluster, { type Worker } from 'node:cluster';
import { join } from 'node:path';
import { guardAgainstOrphan, type OrphanGuard } from './orphan-guard';

/*
 * Why Node's cluster module (and not N processes on N ports behind a round-robin proxy): it is
 * how a Node service uses several cores on one host (pm2 does the same), all workers share ONE
 * port so the load generator needs no proxy hop that would cost CPU on a small machine and blur
 * the latencies, and workers exit by themselves when the primary dies (their IPC channel closes).
 * Connections are handed out round-robin by the primary, so each worker takes a share of the
 * keep-alive connections and every purchase crosses processes: the lock is truly distributed.
 */

/** The running workers. */
export interface AppCluster {
  /** `http://127.0.0.1:PORT` shared by every worker. */
  readonly url: string;
  readonly pids: readonly number[];
  /** SIGTERM each worker (it closes the app: locks released, connections closed), SIGKILL after 15 s. */
  stop(): Promise<void>;
}

/** Options of startAppCluster. */
export interface AppClusterOptions {
  workers: number;
  /** Environment of the workers on top of ours (REDIS_URL, SECKILL_DELAY_MS, ...). */
  env: Record<string, string>;
  /** Receives every line the workers print. */
  log: (line: string) => void;
}

const START_TIMEOUT_MS = 180_000;
const STOP_GRACE_MS = 15_000;

/** Forks `workers` app processes listening on one free port; resolves once all listen. */
export async function startAppCluster(options: AppClusterOptions): Promise<AppCluster> {
  cluster.setupPrimary({
    exec: join(__dirname, 'cluster-worker.ts'),
    execArgv: ['-r', join(__dirname, 'register.cjs')],
    silent: true,
  });
  const workers: Worker[] = [];
  const guards: OrphanGuard[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(workers.map(stopWorker));
    guards.forEach((g) => g.release());
  };
  try {
    // PORT=0 in cluster mode: the primary picks one free port and every worker shares it.
    const env = { ...options.env, PORT: '0', HOST: '127.0.0.1' };
    const ports = await Promise.all(
      Array.from({ length: options.workers }, () => {
        const worker = cluster.fork(env);
        workers.push(worker);
        if (worker.process.pid) guards.push(guardAgainstOrphan(worker.process.pid));
        forwardOutput(worker, options.log);
        return listeningPort(worker);
      }),
    );
    return { url: `http://127.0.0.1:${ports[0]}`, pids: workers.map((w) => w.process.pid!), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function forwardOutput(worker: Worker, log: (line: string) => void): void {
  const prefix = `[worker ${worker.process.pid}] `;
  for (const stream of [worker.process.stdout, worker.process.stderr]) {
    stream?.setEncoding('utf8');
    let partial = '';
    stream?.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) log(prefix + line);
    });
  }
}

function listeningPort(worker: Worker): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(`app worker ${worker.process.pid} did not listen within ${START_TIMEOUT_MS / 1000} s`),
        ),
      START_TIMEOUT_MS,
    );
    worker.once('listening', (address) => {
      clearTimeout(timer);
      resolve(address.port);
    });
    worker.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(
        new Error(`app worker ${worker.process.pid} exited during start-up (code ${code}, signal ${signal})`),
      );
    });
  });
}

async function stopWorker(worker: Worker): Promise<void> {
  const proc = worker.process;
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}
