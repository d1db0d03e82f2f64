/*
 * One seckill app of the bench's HTTP part in a process of its own, as the profiling tools drive it
 * (seckill-profile.ts, seckill-gc.ts): the item's stock set, the app started (`bench/http/serve.ts`,
 * from `tree` when given), 200 warm-up requests on another item; and the /proc readings of its CPU.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import autocannon from 'autocannon';
import { getFreePort } from '../../test/support/free-port';
import type { RedisTarget } from '../redis-target';
import { benchSampleConfig, ITEM_ID, type HttpAppId } from '../http/seckill-bench-config';

export interface SeckillApp {
  child: ChildProcessByStdio<Writable, Readable, null>;
  port: number;
}

/** Starts `app` with stock for `requests` on a clean Redis; resolves once it is warmed up. */
export async function startSeckillApp(
  app: HttpAppId,
  target: RedisTarget,
  requests: number,
  launch: { nodeArgs: string[]; env?: Record<string, string>; tree?: string },
): Promise<SeckillApp> {
  await target.clean();
  const port = await getFreePort();
  const prefix = benchSampleConfig(target.url, port).keyPrefix;
  await target.admin.mset(
    `${prefix}seckill:${ITEM_ID}:stock`,
    String(requests),
    `${prefix}seckill:${ITEM_ID}:sold`,
    '0',
  );
  const child = spawn(
    process.execPath,
    [...launch.nodeArgs, '-r', 'ts-node/register/transpile-only', 'bench/http/serve.ts'],
    {
      env: {
        ...process.env,
        BENCH_HTTP_APP: app,
        BENCH_REDIS_URL: target.url,
        BENCH_PORT: String(port),
        ...launch.env,
      },
      stdio: ['pipe', 'pipe', 'inherit'],
      cwd: launch.tree,
    },
  );
  await new Promise<void>((ready) =>
    child.stdout.on('data', (d: Buffer) => d.includes('listening') && ready()),
  );
  await autocannon({
    url: `http://127.0.0.1:${port}/seckill/warmup`,
    method: 'POST',
    connections: 4,
    amount: 200,
  });
  return { child, port };
}

/**
 * The main thread's (the event loop's) time on a CPU and time waiting for one while runnable, in µs
 * (/proc/PID/schedstat, ns): a profile's samples are wall time, so a sample taken while the thread
 * waited for a CPU counts that wait as well.
 */
export function mainThreadSchedUs(pid: number): { onCpu: number; waiting: number } {
  const [onCpu, waiting] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ').map(Number);
  return { onCpu: onCpu! / 1000, waiting: waiting! / 1000 };
}

/** The process' CPU time (user + system, all threads), in µs (/proc/PID/stat, 10 ms ticks). */
export function processCpuUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}
