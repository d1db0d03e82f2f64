/*
 * Every Lua script of lib/core/scripts and the reply codes it can answer. The conformance spec
 * checks that this table names every script file, that each entry's codes are those the script's
 * header lists ("-- Returns ..."), that exactly the scripts with codes have a port in
 * lib/testing/memory/scripts, and that its scenarios made both sides answer every code.
 * A new script, or a new reply code in a script's header, fails the spec until it is added here
 * and a scenario covers it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the scripts live. */
export const SCRIPTS_DIR = join(__dirname, '..', '..', '..', 'lib', 'core', 'scripts');

/** One script's entry: the codes both sides must answer, or why the in-memory backend has no port. */
export type ScriptEntry =
  { codes: readonly number[]; perRequest?: true } | { redisOnly: string } | { prelude: true };

/** The table (codes in the order the headers list them). */
export const SCRIPT_REPLIES: Record<string, ScriptEntry> = {
  'mutex-acquire': { codes: [1, 2, 0, -2, -1] },
  'mutex-release': { codes: [1, 2, 0] },
  'token-acquire': { codes: [1, 0, -1] },
  'token-release': { codes: [1, 0] },
  renew: { codes: [1, 0, -1], perRequest: true },
  'fair-acquire': { codes: [1, 2, 0, -2, -1] },
  'fair-abandon': { codes: [1, 0] },
  'read-write-acquire': { codes: [1, 2, 0, -2, -3, -1] },
  'read-write-release': { codes: [1, 2, 0] },
  'read-write-abandon': { codes: [1, 0] },
  'semaphore-acquire': { codes: [1, 2, 0, -2, -1] },
  'semaphore-release': { codes: [1, 2, 0] },
  'holders-renew': { codes: [1, 0], perRequest: true },
  'multi-acquire': { codes: [1, 0, -1] },
  'fence-floor': { redisOnly: 'RedLock only (several Redis masters); the in-memory backend is one store' },
  // Inspection and force release (lib/core/inspection): not supported by the in-memory backend (docs/TESTING.md).
  inspect: { redisOnly: 'inspection is not supported in memory: the calls reject with a TypeError' },
  'registry-read': { redisOnly: 'inspection is not supported in memory (the registry of held locks)' },
  'force-release': {
    redisOnly: 'force release is not supported in memory: the call rejects with a TypeError',
  },
  'audit-append': { redisOnly: 'the force-release audit stream exists only on Redis' },
  'audit-read': { redisOnly: 'the force-release audit stream exists only on Redis' },
  'acl-check': {
    redisOnly: "the start-up check of the Redis user's ACL: the in-memory backend has no users",
  },
  fence: { prelude: true },
  holders: { prelude: true },
  'single-hold': { prelude: true },
  args: { prelude: true },
};

/** The script files (names without `.lua`). */
export function scriptNames(): string[] {
  return readdirSync(SCRIPTS_DIR)
    .filter((f) => f.endsWith('.lua'))
    .map((f) => f.slice(0, -'.lua'.length))
    .sort();
}

/**
 * The reply codes a script's header lists after "Returns": `{code, ...}` entries, or for scripts
 * answering a bare number (per request), the numbers that start each listed meaning.
 */
export function headerCodes(name: string): number[] {
  const header: string[] = [];
  for (const line of readFileSync(join(SCRIPTS_DIR, `${name}.lua`), 'utf8').split('\n')) {
    if (!line.startsWith('--')) break;
    if (!line.startsWith('--!')) header.push(line.replace(/^--\s?/, ''));
  }
  const text = header.join(' ');
  const at = text.indexOf('Returns');
  if (at < 0) return [];
  const returns = text.slice(at);
  const pattern = returns.includes('{')
    ? /\{\s*(-?\d+)/g
    : /(?:Returns|,)\s*(?:one entry per \w+:\s*)?(-?\d+)\s+[a-z(]/g;
  return [...returns.matchAll(pattern)].map((m) => Number(m[1]));
}

/** The codes in one normalised raw reply of `script` (each request's code for the renew scripts). */
export function replyCodes(script: string, reply: unknown): number[] {
  const entry = SCRIPT_REPLIES[script];
  const perRequest = entry !== undefined && 'codes' in entry && entry.perRequest === true;
  if (Array.isArray(reply))
    return (perRequest ? reply : [reply[0]]).filter((c): c is number => typeof c === 'number');
  return typeof reply === 'number' ? [reply] : [];
}
