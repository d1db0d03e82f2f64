import * as net from 'net';
import { LOCALHOST } from './free-port';

/** A RESP2 reply: simple/bulk string, integer, nil or array. */
export type RespReply = string | number | null | RespReply[];

/** An error reply (`-ERR ...`) from the server. */
export class RespReplyError extends Error {
  override name = 'RespReplyError';
}

/** Where and how long {@link redisCommand} talks to a server. */
export interface RedisCommandOptions {
  host?: string;
  timeoutMs?: number;
}

function encode(args: readonly (string | number)[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = Buffer.from(String(arg));
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/** Parses one reply at `offset`; returns undefined when more bytes are needed. */
function parse(buf: Buffer, offset: number): { value: RespReply | RespReplyError; end: number } | undefined {
  const lineEnd = buf.indexOf('\r\n', offset);
  if (lineEnd < 0) return undefined;
  const type = String.fromCharCode(buf[offset]);
  const line = buf.toString('utf8', offset + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case '+':
      return { value: line, end: next };
    case '-':
      return { value: new RespReplyError(line), end: next };
    case ':':
      return { value: Number(line), end: next };
    case '$': {
      const len = Number(line);
      if (len < 0) return { value: null, end: next };
      if (buf.length < next + len + 2) return undefined;
      return { value: buf.toString('utf8', next, next + len), end: next + len + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items: RespReply[] = [];
      let pos = next;
      for (let i = 0; i < count; i++) {
        const item = parse(buf, pos);
        if (!item) return undefined;
        if (item.value instanceof RespReplyError) return { value: item.value, end: item.end };
        items.push(item.value);
        pos = item.end;
      }
      return { value: items, end: pos };
    }
    default:
      throw new Error(`unexpected RESP type byte ${JSON.stringify(type)}`);
  }
}

/**
 * Sends one command to 127.0.0.1:`port` over a fresh raw socket (RESP2, no client library)
 * and resolves with its reply; rejects on error replies, connection errors and timeout.
 * Used by the harness to probe servers that may be starting, paused or dead.
 */
export function redisCommand(
  port: number,
  args: readonly (string | number)[],
  options: RedisCommandOptions = {},
): Promise<RespReply> {
  const { host = LOCALHOST, timeoutMs = 2000 } = options;
  return new Promise((resolve, reject) => {
    let data = Buffer.alloc(0);
    const socket = net.connect({ port, host });
    const timer = setTimeout(() => {
      finish(new Error(`${args[0]} to ${host}:${port} timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    const finish = (error: Error | undefined, value?: RespReply): void => {
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(value as RespReply);
    };
    socket.on('connect', () => socket.write(encode(args)));
    socket.on('error', (error) => finish(error));
    socket.on('close', () => finish(new Error(`connection to ${host}:${port} closed before a reply`)));
    socket.on('data', (chunk) => {
      data = Buffer.concat([data, chunk]);
      let parsed;
      try {
        parsed = parse(data, 0);
      } catch (error) {
        finish(error as Error);
        return;
      }
      if (!parsed) return;
      if (parsed.value instanceof RespReplyError) finish(parsed.value);
      else finish(undefined, parsed.value);
    });
  });
}

/** Parses `INFO`/`CLUSTER INFO` text ("field:value" lines) into a record. */
export function parseInfo(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields[line.slice(0, colon)] = line.slice(colon + 1);
  }
  return fields;
}

/** Runs `INFO [section]` (or `CLUSTER INFO` when section is 'cluster-info') and parses it. */
export async function redisInfo(
  port: number,
  section?: string,
  options?: RedisCommandOptions,
): Promise<Record<string, string>> {
  const args = section === 'cluster-info' ? ['CLUSTER', 'INFO'] : section ? ['INFO', section] : ['INFO'];
  return parseInfo(String(await redisCommand(port, args, options)));
}

/** Commands the server executed (INFO commandstats), by command name, INFO itself left out. */
export async function commandCounts(port: number): Promise<Map<string, number>> {
  const stats = await redisInfo(port, 'commandstats');
  const counts = new Map<string, number>();
  for (const [field, value] of Object.entries(stats)) {
    if (!field.startsWith('cmdstat_')) continue;
    const name = field.slice('cmdstat_'.length);
    if (name === 'info') continue;
    // A rejected or failed call was still sent; count it as sent.
    const total = ['calls', 'rejected_calls', 'failed_calls']
      .map((stat) => Number(new RegExp(`(?:^|,)${stat}=(\\d+)`).exec(value)?.[1] ?? 0))
      .reduce((a, b) => a + b, 0);
    counts.set(name, total);
  }
  return counts;
}
