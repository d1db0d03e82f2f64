import { spawn, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { getFreePort, LOCALHOST } from './free-port';
import { makeTempDir, terminateProcess, trackChildPid, untrackChildPid } from './process-reaper';
import { redisCommand } from './redis-command';
import type { ExitStatus, RedisServerProcess, StartRedisOptions } from './redis-server-types';
import { sleep } from './wait';

/** Binary used for servers and sentinels; override with REDIS_SERVER_BIN. */
export const REDIS_SERVER_BIN = process.env.REDIS_SERVER_BIN ?? 'redis-server';

export type { ExitStatus, RedisServerProcess, StartRedisOptions } from './redis-server-types';

// prettier-ignore
const BASE_ARGS = (port: number, dir: string): string[] => [
  '--port', String(port), '--bind', LOCALHOST, '--save', '', '--appendonly', 'no',
  '--daemonize', 'no', '--dir', dir, '--protected-mode', 'no',
  '--logfile', path.join(dir, 'redis.log'),
  // Harness tuning: start replica full syncs at once instead of waiting 5 s for more replicas.
  '--repl-diskless-sync-delay', '0',
  // Lets fault tests use DEBUG SLEEP / DEBUG SEGFAULT from loopback connections.
  '--enable-debug-command', 'local',
];

const registry = new Set<RedisServer>();
const MAX_CAPTURE = 16_384;

class RedisServer implements RedisServerProcess {
  readonly host = LOCALHOST;
  readonly dir = makeTempDir('redis-');
  private child?: ChildProcess;
  private exitPromise: Promise<ExitStatus> = Promise.resolve({ code: null, signal: null });
  private captured = '';
  private isPaused = false;
  private alive = false;
  private stopping?: Promise<void>;

  constructor(
    public port: number,
    private readonly opts: StartRedisOptions,
  ) {}

  get url(): string {
    return `redis://${this.host}:${this.port}`;
  }
  get pid(): number {
    return this.child?.pid ?? -1;
  }
  get running(): boolean {
    return this.alive;
  }
  get paused(): boolean {
    return this.isPaused;
  }
  get exited(): Promise<ExitStatus> {
    return this.exitPromise;
  }

  unref(): void {
    this.child?.unref();
    (this.child?.stdout as { unref?: () => void } | null)?.unref?.();
    (this.child?.stderr as { unref?: () => void } | null)?.unref?.();
  }

  async launch(): Promise<void> {
    const args = this.opts.sentinelConfig
      ? [this.writeSentinelConfig(), '--sentinel']
      : [...BASE_ARGS(this.port, this.dir), ...(this.opts.args ?? [])];
    const child = spawn(REDIS_SERVER_BIN, args, { cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.isPaused = false;
    this.alive = child.pid !== undefined;
    const capture = (chunk: Buffer): void => {
      this.captured = (this.captured + chunk.toString()).slice(-MAX_CAPTURE);
    };
    child.stdout?.on('data', capture);
    child.stderr?.on('data', capture);
    this.exitPromise = new Promise((resolve) => {
      child.once('error', (error) => {
        capture(Buffer.from(`spawn error: ${error.message}\n`));
        this.alive = false;
        resolve({ code: null, signal: null });
      });
      child.once('exit', (code, signal) => {
        this.alive = false;
        this.isPaused = false;
        if (child.pid) untrackChildPid(child.pid);
        child.stdout?.destroy();
        child.stderr?.destroy();
        resolve({ code, signal });
      });
    });
    if (child.pid) trackChildPid(child.pid);
    await this.waitForPing(this.opts.startTimeoutMs ?? 10_000);
  }

  private writeSentinelConfig(): string {
    const file = path.join(this.dir, 'sentinel.conf');
    if (!fs.existsSync(file)) {
      const head = [`port ${this.port}`, `bind ${LOCALHOST}`, 'protected-mode no', `dir ${this.dir}`];
      head.push(`logfile ${path.join(this.dir, 'redis.log')}`);
      fs.writeFileSync(file, [...head, ...(this.opts.sentinelConfig ?? [])].join('\n') + '\n');
    }
    return file;
  }

  private async waitForPing(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        if ((await redisCommand(this.port, ['PING'], { timeoutMs: 1000 })) === 'PONG') return;
      } catch {
        // not listening yet
      }
      if (!this.alive) {
        const status = await this.exitPromise;
        throw new Error(
          `redis-server on port ${this.port} exited during start-up ` +
            `(code ${status.code}, signal ${status.signal}):\n${this.output()}`,
        );
      }
      if (Date.now() > deadline) {
        throw new Error(
          `redis-server on port ${this.port} did not answer PING within ${timeoutMs} ms:\n${this.output()}`,
        );
      }
      await sleep(20);
    }
  }

  output(): string {
    let log = '';
    try {
      log = fs.readFileSync(path.join(this.dir, 'redis.log'), 'utf8').slice(-MAX_CAPTURE);
    } catch {
      // no log yet
    }
    return `--- stdout/stderr ---\n${this.captured}\n--- redis.log ---\n${log}`;
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (!this.running) return;
    this.child?.kill(signal);
    if (signal === 'SIGSTOP') this.isPaused = true;
    if (signal === 'SIGCONT') this.isPaused = false;
  }
  pause(): void {
    this.kill('SIGSTOP');
  }
  resume(): void {
    this.kill('SIGCONT');
  }

  /** Ends the current incarnation: SIGTERM (+SIGCONT), then SIGKILL after the grace period. */
  private async terminate(graceMs: number): Promise<void> {
    if (!this.running || !this.child) return;
    await terminateProcess(this.child, this.exitPromise, graceMs);
  }

  stop(graceMs = 3000): Promise<void> {
    this.stopping ??= (async () => {
      await this.terminate(graceMs);
      registry.delete(this);
      fs.rmSync(this.dir, { recursive: true, force: true });
    })();
    return this.stopping;
  }

  async restart(options: { downtimeMs?: number } = {}): Promise<void> {
    if (this.stopping) throw new Error(`redis-server on port ${this.port} was stopped; it cannot restart`);
    await this.terminate(3000);
    if (options.downtimeMs) await sleep(options.downtimeMs);
    await this.launch();
  }
}

/**
 * Starts `redis-server --port P --bind 127.0.0.1 --save '' --appendonly no ...` (or a sentinel)
 * and resolves once it answers PING. The process is registered so that it is killed if the
 * test process exits first; call stop() when done.
 */
export async function startRedis(opts: StartRedisOptions = {}): Promise<RedisServerProcess> {
  for (let attempt = 1; ; attempt++) {
    const server = new RedisServer(opts.port ?? (await getFreePort()), opts);
    registry.add(server);
    try {
      await server.launch();
      return server;
    } catch (error) {
      const portRace = opts.port === undefined && /Address already in use/i.test(server.output());
      await server.stop(500);
      if (!portRace || attempt >= 5) throw error;
    }
  }
}

/** Every server started by this module (in this test file) and not yet stopped. */
export function runningRedisServers(): RedisServerProcess[] {
  return [...registry];
}

/** Stops every server still registered; handy in a global afterAll. */
export async function stopAllRedis(): Promise<void> {
  await Promise.all([...registry].map((server) => server.stop(1000)));
}
