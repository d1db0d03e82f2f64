// Past the core's public surface: ioredis is loaded the core's one way (errors/optional-peer.ts), from
// where this package is installed, as createLockEngine does, for the Cluster the command opens itself.
import { hostname } from 'node:os';
import type { Cluster, ClusterNode, ClusterOptions } from 'ioredis';
import { createLockEngine, type LockEngine, type LockKind } from '../core';
import { clientPackageMissing, ifPeerMissing } from '../core/internal';
import { CliUsageError, parseCliArgs, USAGE, type CliCommand } from './cli-args';
import { auditTable, locksTable } from './cli-output';

/** Where the CLI writes. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

/** Exit codes of the CLI. */
export const CLI_EXIT = { ok: 0, notFound: 1, usage: 2, redis: 3 } as const;

const defaultIo: CliIo = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
};

/**
 * `nestjs-distributed-lock list|show|release|audit`: the operator's view without the app, on the
 * core engine (no Nest). Resolves with the exit code (see CLI_EXIT); never throws.
 */
export async function runCli(
  argv: readonly string[],
  io: CliIo = defaultIo,
  env = process.env,
): Promise<number> {
  let cmd: CliCommand;
  try {
    cmd = parseCliArgs(argv, env);
  } catch (err) {
    io.err(`${(err as Error).message}\n\n${USAGE}`);
    return CLI_EXIT.usage;
  }
  if (cmd.command === 'help') {
    io.out(USAGE);
    return CLI_EXIT.ok;
  }
  let engine: LockEngine;
  let close: () => Promise<void>;
  try {
    ({ engine, close } = openEngine(cmd));
  } catch (err) {
    io.err((err as Error).message);
    return CLI_EXIT.usage;
  }
  try {
    return await execute(engine, cmd, io);
  } catch (err) {
    const e = err as Error;
    io.err(`${e.name}: ${e.message}`);
    if (err instanceof TypeError || err instanceof RangeError || err instanceof CliUsageError)
      return CLI_EXIT.usage;
    // Anything else is the storage failing (LockRedisError, a closed or refused connection).
    return CLI_EXIT.redis;
  } finally {
    await close();
  }
}

/** The engine a command runs on, and how to close it with the connections opened for it. */
function openEngine(cmd: CliCommand): { engine: LockEngine; close: () => Promise<void> } {
  const common = { keyPrefix: cmd.prefix, inspection: false, app: 'nestjs-distributed-lock-cli' };
  if (!cmd.cluster) {
    const engine = createLockEngine({ redis: cmd.redis, ...common });
    return { engine, close: () => engine.close() };
  }
  const nodes = cmd.redis.split(',').map((url) => {
    const u = new URL(url.trim());
    return { host: u.hostname, port: Number(u.port || 6379) };
  });
  // ioredis, loaded only for --cluster (the package loads without it).
  const ioredis = ioredisCluster();
  const cluster = new ioredis.Cluster(nodes, {
    lazyConnect: true,
    redisOptions: { maxRetriesPerRequest: 3 },
  });
  cluster.on('error', () => undefined);
  const engine = createLockEngine({ redis: cluster, ...common });
  // The engine never closes a client it was given: the CLI closes it after the engine.
  return { engine, close: () => engine.close().finally(() => cluster.disconnect()) };
}

async function execute(engine: LockEngine, cmd: CliCommand, io: CliIo): Promise<number> {
  const kind = cmd.kind as LockKind | undefined;
  const print = (value: unknown, text: () => string): void =>
    io.out(cmd.json ? JSON.stringify(value) : text());
  switch (cmd.command) {
    case 'list': {
      const page = await engine.list({ match: cmd.match, kind, limit: cmd.limit ?? 1000 });
      print(page, () => locksTable(page.locks) + (page.cursor ? '\n(more: narrow with --match)' : ''));
      return CLI_EXIT.ok;
    }
    case 'show': {
      const key = cmd.key!;
      const [lock, forceReleases] = await Promise.all([
        engine.inspect(key, { kind }),
        engine.forceReleases({ key, limit: 10 }),
      ]);
      print({ key, lock, forceReleases }, () => {
        const held = lock ? locksTable([lock]) : `${JSON.stringify(key)} is not held.`;
        return forceReleases.length ? `${held}\n\nForce releases:\n${auditTable(forceReleases)}` : held;
      });
      return lock ? CLI_EXIT.ok : CLI_EXIT.notFound;
    }
    case 'release': {
      const key = cmd.key!;
      const by = cmd.by ?? `${process.env.USER ?? 'cli'}@${hostname()} (cli)`;
      const released = await engine.forceRelease(key, { kind, reason: cmd.reason!, by });
      const [entry] = released ? await engine.forceReleases({ key, limit: 1 }) : [];
      print({ key, released, audit: entry ?? null }, () =>
        released
          ? `Released ${JSON.stringify(key)}.\n${auditTable(entry ? [entry] : [])}`
          : `${JSON.stringify(key)} was not held.`,
      );
      return released ? CLI_EXIT.ok : CLI_EXIT.notFound;
    }
    default: {
      const records = await engine.forceReleases({ key: cmd.key, limit: cmd.limit ?? 50 });
      print({ forceReleases: records }, () => auditTable(records));
      return CLI_EXIT.ok;
    }
  }
}

/** ioredis's Cluster class; a clear error when ioredis is not installed (lib/core/errors/optional-peer.ts). */
function ioredisCluster(): { Cluster: new (nodes: ClusterNode[], options: ClusterOptions) => Cluster } {
  try {
    return require('ioredis') as { Cluster: new (nodes: ClusterNode[], options: ClusterOptions) => Cluster };
  } catch (error) {
    throw ifPeerMissing(error, 'ioredis') ?? clientPackageMissing('ioredis', 'The CLI with --cluster');
  }
}
