/*
 * The least-privilege ACL exactly as docs/SECURITY.md prints it, as ACL SETUSER rules for the server a spec
 * runs on: the block for one Redis (or a Sentinel-managed master) or for a Cluster, plus the per-version
 * block when the server knows its commands (`+client|setinfo` since Redis 7.2 and on every Valkey; Redis
 * 7.0 refuses the whole SETUSER for a subcommand it does not know). The specs read the docs themselves, so
 * the ACL a user copies is the one that ran.
 */
import { readFileSync } from 'fs';
import * as path from 'path';
import { redisCommand } from './redis-command';

/** Which server answers on a port, from `INFO server`. */
export interface ServerIdentity {
  engine: 'redis' | 'valkey';
  /** The engine's own version (Valkey also reports `redis_version:7.2.4` for old clients). */
  version: string;
  major: number;
  minor: number;
}

/** Parses `INFO server` text. */
export function parseServerIdentity(infoServer: string): ServerIdentity {
  const field = (name: string): string | undefined =>
    new RegExp(`^${name}:(.*)$`, 'm').exec(infoServer)?.[1]?.trim();
  const valkey = field('valkey_version');
  const version = valkey ?? field('redis_version');
  if (!version) throw new Error(`INFO server names no version:\n${infoServer}`);
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return { engine: valkey ? 'valkey' : 'redis', version, major, minor };
}

/** The server on `port` (127.0.0.1), asked as the default user. */
export async function serverIdentity(port: number): Promise<ServerIdentity> {
  return parseServerIdentity(String(await redisCommand(port, ['INFO', 'server'])));
}

/** Whether the server has `CLIENT SETINFO`, which clients send on connect where it exists. */
export function hasClientSetinfo(server: ServerIdentity): boolean {
  return server.engine === 'valkey' || server.major > 7 || (server.major === 7 && server.minor >= 2);
}

/** The ACL blocks of docs/SECURITY.md, each marked by an HTML comment `<!-- acl: NAME -->` before it. */
export type AclBlock = 'single' | 'cluster' | 'since-7.2';

const SECURITY_MD = path.join(__dirname, '..', '..', 'docs', 'SECURITY.md');

/**
 * The rules of one block (without the user name), with the password replaced by `pw` and the docs'
 * `lock:` prefix of key and channel patterns by `prefix`.
 */
export function documentedRules(block: AclBlock, prefix = 'lock:'): string[] {
  const doc = readFileSync(SECURITY_MD, 'utf8');
  const marker = `<!-- acl: ${block} -->`;
  const at = doc.indexOf(marker);
  if (at < 0) throw new Error(`docs/SECURITY.md: no ${marker}`);
  const body = /^\s*```\n([\s\S]*?)```/.exec(doc.slice(at + marker.length))?.[1];
  if (!body) throw new Error(`docs/SECURITY.md: no code block after ${marker}`);
  const [acl, setuser, , ...rules] = body.split(/\s+/).filter(Boolean);
  if (`${acl} ${setuser}` !== 'ACL SETUSER') throw new Error(`docs/SECURITY.md: ${marker} is no ACL SETUSER`);
  return rules.map((r) => (r.startsWith('>') ? '>pw' : /^[~&]lock:\*$/.test(r) ? `${r[0]}${prefix}*` : r));
}

/**
 * What docs/SECURITY.md tells a user of `server` to run: the topology's block, then the per-version block
 * where the server knows it (run as a second ACL SETUSER, as the docs say).
 */
export function documentedAcl(
  topology: 'single' | 'cluster',
  server: ServerIdentity,
  prefix?: string,
): string[][] {
  const steps = [documentedRules(topology, prefix)];
  if (hasClientSetinfo(server)) steps.push(documentedRules('since-7.2', prefix));
  return steps;
}

/** Runs the documented ACL for `user` on the server at `port`. */
export async function setDocumentedUser(
  port: number,
  user: string,
  topology: 'single' | 'cluster',
  prefix?: string,
): Promise<void> {
  for (const rules of documentedAcl(topology, await serverIdentity(port), prefix)) {
    await redisCommand(port, ['ACL', 'SETUSER', user, ...rules]);
  }
}

/** The entries of `ACL LOG` on `port`, as `user: reason object` lines. */
export async function aclDenials(port: number): Promise<string[]> {
  const log = (await redisCommand(port, ['ACL', 'LOG', '128'])) as unknown[][];
  return log.map((entry) => {
    const fields = new Map<string, unknown>();
    for (let i = 0; i + 1 < entry.length; i += 2) fields.set(String(entry[i]), entry[i + 1]);
    return `${String(fields.get('username'))}: ${String(fields.get('reason'))} ${String(fields.get('object'))}`;
  });
}
