import { availableParallelism } from 'node:os';

/** Which purchase route(s) the demo drives. */
export type DemoRoute = 'locked' | 'unsafe';

/** Settings of one demo run, from the command line. */
export interface DemoArgs {
  /** Concurrent HTTP connections (`--connections`, default 1000: the seed's `ab -c 1000`). */
  connections: number;
  /** Requests per route (`--requests`, default 2000: the seed's `ab -n 2000`). */
  requests: number;
  /** App worker processes (`--workers`, default 2 to 4 by CPU count). */
  workers: number;
  /** Units on sale before each route's run (`--stock`, default 500: fewer than requests, so it sells out). */
  stock: number;
  /** `--route locked|unsafe|both` (default both, locked first). */
  routes: DemoRoute[];
  /** `--json-only`: stdout carries only the JSON result lines; progress and report go to stderr. */
  jsonOnly: boolean;
  /** `--help`. */
  help: boolean;
}

/** Usage text of `npm run demo -- [flags]`. */
export const DEMO_USAGE = `Usage: npm run demo -- [flags]
  --connections N   concurrent connections (default 1000)
  --requests N      requests per route (default 2000)
  --workers N       app worker processes (default ${defaultWorkers()})
  --stock N         units on sale before each run (default 500)
  --route R         locked | unsafe | both (default both)
  --json-only       print only the JSON result lines on stdout
Environment: REDIS_URL (default: start a private redis-server on a free port), SECKILL_DELAY_MS (default 1).`;

function defaultWorkers(): number {
  return Math.min(4, Math.max(2, availableParallelism()));
}

/** Parses `--flag value` / `--flag=value`; throws a message naming the flag for anything wrong. */
export function parseDemoArgs(argv: readonly string[]): DemoArgs {
  const args: DemoArgs = {
    connections: 1000,
    requests: 2000,
    workers: defaultWorkers(),
    stock: 500,
    routes: ['locked', 'unsafe'],
    jsonOnly: false,
    help: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--connections':
        args.connections = positiveInt(flag, value());
        break;
      case '--requests':
        args.requests = positiveInt(flag, value());
        break;
      case '--workers':
        args.workers = positiveInt(flag, value(), 1, 64);
        break;
      case '--stock':
        args.stock = positiveInt(flag, value(), 0);
        break;
      case '--route': {
        const route = value();
        if (route !== 'locked' && route !== 'unsafe' && route !== 'both') {
          throw new Error(`--route must be locked, unsafe or both, got ${JSON.stringify(route)}`);
        }
        args.routes = route === 'both' ? ['locked', 'unsafe'] : [route];
        break;
      }
      case '--json-only':
        args.jsonOnly = true;
        break;
      case '--help':
      case '-h':
        args.help = true;
        break;
      default:
        throw new Error(`unknown flag ${JSON.stringify(argv[i])}`);
    }
  }
  if (args.connections > args.requests) {
    throw new Error(`--connections (${args.connections}) cannot exceed --requests (${args.requests})`);
  }
  return args;
}

function positiveInt(flag: string, raw: string, min = 1, max = 1_000_000_000): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`${flag} must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return n;
}
