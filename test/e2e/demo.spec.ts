import type { RouteResult } from '../../sample-app/load/load-run';
import { spawnWorker } from '../support/spawn-worker';
import { waitUntil } from '../support/wait';
import { processesWithEnv } from '../support/marked-processes';

// The demo compiles and starts a redis-server and two Nest workers: generous on a busy 2-core box.
jest.setTimeout(300_000);

const DEMO = 'sample-app/load/demo.ts';
const MARKER = 'NDL_DEMO_E2E_MARKER';

/** Runs `npm run demo`'s script with `args` in a child process, without REDIS_URL (it starts its own). */
async function runDemo(args: string[], marker: string) {
  const demo = spawnWorker<RouteResult>(DEMO, {
    args,
    env: { REDIS_URL: undefined, SECKILL_DELAY_MS: '5', [MARKER]: marker },
  });
  // Watch what it starts while it runs, so the "nothing left" check below is not vacuous.
  let peakProcesses = 0;
  const watcher = setInterval(() => {
    peakProcesses = Math.max(peakProcesses, processesWithEnv(MARKER, marker).length);
  }, 100);
  const status = await demo.exited.finally(() => clearInterval(watcher));
  return { demo, status, peakProcesses };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm run demo', () => {
  it('runs end to end: the locked route sells exactly the stock, the unsafe one oversells, nothing is left running', async () => {
    const marker = `run-${process.pid}-${Date.now()}`;
    const args = [
      '--connections',
      '50',
      '--requests',
      '200',
      '--workers',
      '2',
      '--stock',
      '50',
      '--route',
      'both',
      '--json-only',
    ];
    const { demo, status, peakProcesses } = await runDemo(args, marker);

    expect({ status, stderr: status.code === 0 ? '' : demo.stderr() }).toEqual({
      status: { code: 0, signal: null },
      stderr: '',
    });
    // --json-only: stdout holds the result lines and nothing else.
    expect(demo.stdoutNoise()).toEqual([]);
    expect(demo.messages.map((m) => m.route)).toEqual(['locked', 'unsafe']);
    const [locked, unsafe] = demo.messages;

    for (const line of demo.messages) {
      for (const field of [
        'route',
        'connections',
        'requests',
        'rps',
        'p50Ms',
        'p99Ms',
        'maxMs',
        'non2xx',
        'errors',
        'sold',
        'stockLeft',
        'oversold',
        'soldOut',
      ]) {
        expect(line).toHaveProperty(field);
      }
      expect(line).toMatchObject({ connections: 50, requests: 200, workers: 2, stock: 50, completed: 200 });
    }
    expect(locked).toMatchObject({
      oversold: 0,
      errors: 0,
      sold: 50,
      stockLeft: 0,
      ok: 50,
      soldOut: 150,
      non2xx: 150,
      busy: 0,
    });
    expect(unsafe.errors).toBe(0);
    expect(unsafe.oversold).toBeGreaterThan(0);
    expect(unsafe.sold).toBe(unsafe.ok);

    // Everything it started ended with it. Node children inherit the marker (the demo, two workers
    // and the orphan guards were seen while it ran); redis-server rewrites its process title over
    // its environment, so it is found by the pid the demo reported.
    expect(peakProcesses).toBeGreaterThanOrEqual(3);
    const redisPid = Number(/redis-server started on port \d+ \(pid (\d+)\)/.exec(demo.stderr())?.[1]);
    expect(redisPid).toBeGreaterThan(0);
    await waitUntil(() => !isAlive(redisPid), {
      timeoutMs: 15_000,
      description: `redis-server ${redisPid} to be gone`,
    });
    await waitUntil(() => processesWithEnv(MARKER, marker).length === 0, {
      timeoutMs: 15_000,
      description: `no process left with ${MARKER}=${marker} (left: ${processesWithEnv(MARKER, marker).join(', ')})`,
    });
  });

  it('refuses an unknown flag with exit code 2 and the usage, starting nothing', async () => {
    const marker = `flag-${process.pid}-${Date.now()}`;
    const { demo, status } = await runDemo(['--conections', '5'], marker);
    expect(status.code).toBe(2);
    expect(demo.stderr()).toMatch(/unknown flag "--conections"/);
    expect(demo.stderr()).toMatch(/Usage: npm run demo/);
    expect(demo.messages).toEqual([]);
    expect(processesWithEnv(MARKER, marker)).toEqual([]);
  });
});
