/** A parsed command line of the CLI. */
export interface CliCommand {
  command: 'list' | 'show' | 'release' | 'audit' | 'help';
  key?: string;
  redis: string;
  cluster: boolean;
  prefix: string;
  json: boolean;
  kind?: string;
  match?: string;
  limit?: number;
  reason?: string;
  by?: string;
}

/** A command line the CLI refuses (exit code 2). */
export class CliUsageError extends Error {
  override name = 'CliUsageError';
}

const FLAGS_WITH_VALUE = ['redis', 'prefix', 'kind', 'match', 'limit', 'reason', 'by', 'key'];
const BOOLEAN_FLAGS = ['json', 'cluster', 'help'];

/** The usage text (`--help`). */
export const USAGE = `Usage: nestjs-distributed-lock <command> [options]

Commands:
  list                         the locks held now, by every process (--match GLOB, --kind K, --limit N)
  show <key>                   one lock: holders, waiters, and its recent force releases (--kind K)
  release <key> --reason TEXT  force-release it: evicts the holders, advances the fence, wakes waiters,
                               writes the audit entry (--kind K, --by NAME; default: you@host)
  audit                        the recent force releases (--key KEY, --limit N)

Options:
  --redis URL     Redis URL (default: $REDIS_URL, else redis://127.0.0.1:6379)
  --cluster       --redis names Redis Cluster nodes (comma-separated URLs)
  --prefix P      the keyPrefix the app uses (default: lock:)
  --json          machine-readable output (one JSON document)
  --help          this text

Exit codes: 0 done; 1 not found (show: not held; release: nothing was held);
            2 bad command line (e.g. release without --reason); 3 Redis unreachable or failing.`;

/** Parses `argv` (without node and the script); throws CliUsageError for what it cannot accept. */
export function parseCliArgs(argv: readonly string[], env: NodeJS.ProcessEnv): CliCommand {
  const flags = new Map<string, string | true>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (BOOLEAN_FLAGS.includes(name) && eq < 0) flags.set(name, true);
    else if (FLAGS_WITH_VALUE.includes(name)) {
      const value = eq < 0 ? argv[++i] : arg.slice(eq + 1);
      if (value === undefined) throw new CliUsageError(`--${name} needs a value`);
      flags.set(name, value);
    } else throw new CliUsageError(`Unknown option ${arg}`);
  }
  const text = (name: string): string | undefined => flags.get(name) as string | undefined;
  const [command = 'help', key, ...extra] = positional;
  if (flags.has('help') || command === 'help') return base('help');
  if (!['list', 'show', 'release', 'audit'].includes(command))
    throw new CliUsageError(`Unknown command "${command}"`);
  if (extra.length > 0) throw new CliUsageError(`Unexpected argument "${extra[0]}"`);
  const needsKey = command === 'show' || command === 'release';
  if (needsKey && key === undefined) throw new CliUsageError(`${command} needs a lock key`);
  if (!needsKey && key !== undefined)
    throw new CliUsageError(`${command} takes no key (use --match or --key)`);
  const limitText = text('limit');
  if (limitText !== undefined && !/^\d{1,4}$/.test(limitText))
    throw new CliUsageError('--limit must be a whole number');
  const reason = text('reason');
  if (command === 'release' && (reason === undefined || reason.trim() === '')) {
    throw new CliUsageError('release needs --reason "why": force releases are audited');
  }
  return {
    ...base(command as CliCommand['command']),
    key: key ?? text('key'),
    kind: text('kind'),
    match: text('match'),
    limit: limitText === undefined ? undefined : Number(limitText),
    reason,
    by: text('by'),
  };

  function base(c: CliCommand['command']): CliCommand {
    return {
      command: c,
      redis: text('redis') ?? env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      cluster: flags.get('cluster') === true,
      prefix: text('prefix') ?? 'lock:',
      json: flags.get('json') === true,
    };
  }
}
