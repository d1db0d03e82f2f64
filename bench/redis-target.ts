import Redis from 'ioredis';
import { startRedis, type RedisServerProcess } from '../test/support/redis-server';

/** Counters read from INFO: commands per name (INFO itself left out) and Redis CPU seconds. */
export interface RedisSnapshot {
  commands: Record<string, number>;
  /** µs Redis spent executing each command (a script's time includes the commands it runs). */
  commandMicros: Record<string, number>;
  totalCommands: number;
  cpuSeconds: number;
  usedMemory: number;
}

/** What changed between two snapshots. */
export interface RedisDelta {
  commands: Record<string, number>;
  commandMicros: Record<string, number>;
  totalCommands: number;
  cpuMicros: number;
}

/** The Redis every library of one run shares: started here, or REDIS_URL. */
export class RedisTarget {
  private constructor(
    readonly url: string,
    readonly admin: Redis,
    readonly version: string,
    private readonly server?: RedisServerProcess,
  ) {}

  /** Starts `redis-server --save '' --appendonly no` on a free port, unless `REDIS_URL` is set. */
  static async open(): Promise<RedisTarget> {
    const server = process.env.REDIS_URL ? undefined : await startRedis();
    const url = process.env.REDIS_URL ?? server!.url;
    const admin = new Redis(url);
    const info = parseInfo(await admin.info('server'));
    return new RedisTarget(url, admin, info.redis_version ?? '?', server);
  }

  /** True when this run started the server itself. */
  get owned(): boolean {
    return this.server !== undefined;
  }

  /** INFO commandstats + cpu + memory. */
  async snapshot(): Promise<RedisSnapshot> {
    const stats = await this.admin.info('commandstats');
    const cpu = parseInfo(await this.admin.info('cpu'));
    const memory = parseInfo(await this.admin.info('memory'));
    const commands: Record<string, number> = {};
    const commandMicros: Record<string, number> = {};
    let totalCommands = 0;
    for (const match of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
      if (match[1] === 'info') continue; // the benchmark's own probes
      commands[match[1]!] = Number(match[2]);
      commandMicros[match[1]!] = Number(match[3]);
      totalCommands += Number(match[2]);
    }
    const cpuSeconds = Number(cpu.used_cpu_sys ?? 0) + Number(cpu.used_cpu_user ?? 0);
    return {
      commands,
      commandMicros,
      totalCommands,
      cpuSeconds,
      usedMemory: Number(memory.used_memory ?? 0),
    };
  }

  /** `after − before`, commands per name and Redis CPU in µs. */
  static delta(before: RedisSnapshot, after: RedisSnapshot): RedisDelta {
    const commands: Record<string, number> = {};
    const commandMicros: Record<string, number> = {};
    for (const [name, calls] of Object.entries(after.commands)) {
      const d = calls - (before.commands[name] ?? 0);
      if (d > 0) commands[name] = d;
      const us = (after.commandMicros[name] ?? 0) - (before.commandMicros[name] ?? 0);
      if (us > 0) commandMicros[name] = us;
    }
    return {
      commands,
      commandMicros,
      totalCommands: after.totalCommands - before.totalCommands,
      cpuMicros: Math.round((after.cpuSeconds - before.cpuSeconds) * 1e6),
    };
  }

  /** Deletes every key the benchmark wrote (they all contain "bench:"), never anything else. */
  async clean(): Promise<void> {
    let cursor = '0';
    do {
      const [next, keys] = await this.admin.scan(cursor, 'MATCH', '*bench:*', 'COUNT', 5000);
      cursor = next;
      if (keys.length) await this.admin.unlink(...keys);
    } while (cursor !== '0');
  }

  /** Closes the admin connection and stops the server if this run started it. */
  async close(): Promise<void> {
    await this.admin.quit().catch(() => this.admin.disconnect());
    await this.server?.stop();
  }
}

/** Parses INFO "field:value" lines. */
export function parseInfo(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0 && !line.startsWith('#')) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}
