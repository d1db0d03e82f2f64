/*
 * `npm run demo`: the seckill load test of the seed post (1,000 concurrent clients, 2,000 requests),
 * against the sample app running as several worker processes on one Redis, for the locked route and,
 * for contrast, the unguarded one. Starts its own redis-server when REDIS_URL is unset; everything
 * it starts is stopped at the end, whatever happens. Exit code 0 only if the locked route sold
 * exactly the stock with no errors.
 */
import { startAppCluster } from './app-cluster';
import { DEMO_USAGE, DemoArgs, parseDemoArgs } from './demo-args';
import { formatRoute, jsonLine, lockedRouteProblems } from './demo-report';
import { RouteResult, runRoute } from './load-run';
import { startOwnRedis } from './own-redis';

type Cleanup = () => Promise<void>;

async function main(argv: string[]): Promise<number> {
  let args: DemoArgs;
  try {
    args = parseDemoArgs(argv);
  } catch (error) {
    console.error(`demo: ${(error as Error).message}\n\n${DEMO_USAGE}`);
    return 2;
  }
  if (args.help) {
    console.log(DEMO_USAGE);
    return 0;
  }
  // With --json-only, stdout carries nothing but the result lines; the rest goes to stderr.
  const say = (line: string): void =>
    void (args.jsonOnly ? process.stderr : process.stdout).write(`${line}\n`);
  const cleanups: Cleanup[] = [];
  let stopping: Promise<void> | undefined;
  const stopAll = (): Promise<void> =>
    (stopping ??= (async () => {
      // Last started, first stopped: the workers release their locks while Redis is still up.
      for (const cleanup of cleanups.reverse()) {
        await cleanup().catch((e: Error) => say(`cleanup failed: ${e.message}`));
      }
    })());
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      say(`\n${signal}: stopping everything the demo started...`);
      void stopAll().finally(() =>
        process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1)),
      );
    });
  }

  try {
    let redisUrl = process.env.REDIS_URL;
    if (!redisUrl) {
      const redis = await startOwnRedis();
      cleanups.push(redis.stop);
      redisUrl = redis.url;
      say(`redis-server started on port ${redis.port} (pid ${redis.pid}); it is stopped at the end`);
    } else {
      say(`using REDIS_URL ${redisUrl}`);
    }
    say(`starting ${args.workers} app workers (Node cluster, one port)...`);
    const app = await startAppCluster({ workers: args.workers, env: { REDIS_URL: redisUrl }, log: say });
    cleanups.push(app.stop);
    say(`app listening on ${app.url} (worker pids ${app.pids.join(', ')})`);
    say(
      `lock console: ${app.url}/locks (user and password: LOCK_CONSOLE_USER / LOCK_CONSOLE_PASSWORD, default ops / ops)`,
    );

    const results: RouteResult[] = [];
    for (const route of args.routes) {
      say(
        `\ndriving the ${route} route: ${args.connections} connections, ${args.requests} requests, stock ${args.stock}`,
      );
      results.push(await runRoute({ baseUrl: app.url, route, ...args, progress: say }));
    }

    say('');
    for (const result of results) say(`${formatRoute(result)}\n`);
    for (const result of results) process.stdout.write(`${jsonLine(result)}\n`);

    const locked = results.find((r) => r.route === 'locked');
    const problems = locked ? lockedRouteProblems(locked) : [];
    if (problems.length > 0) {
      say(`\ndemo FAILED: the locked route ${problems.join('; ')}`);
      return 1;
    }
    return 0;
  } catch (error) {
    say(`\ndemo FAILED: ${(error as Error).stack ?? String(error)}`);
    return 1;
  } finally {
    await stopAll();
    say('stopped the app workers and everything else the demo started');
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
