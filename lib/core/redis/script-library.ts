import { createHash } from 'node:crypto';
import { LUA_SOURCES } from '../scripts/lua-sources';

/** One value of a script's ARGV. */
export type ScriptArg = string | number;

/**
 * A Lua script of lib/core/scripts (embedded as code by scripts/embed-lua.mjs), with its SHA1 for EVALSHA. `Args` and `Reply` are
 * the script's ARGV and reply types, declared where the script is defined (see defineScript), so
 * callers get typed arguments and replies instead of casting `unknown`.
 */
export interface LuaScript<Args extends readonly ScriptArg[] = ScriptArg[], Reply = unknown> {
  readonly name: string;
  readonly source: string;
  readonly sha: string;
  /** Type-only: never set at run time. */
  readonly __types?: { args: Args; reply: Reply };
}

const cache = new Map<string, LuaScript>();

/**
 * Loads `scripts/<name>.lua` (resolving `--!include other.lua` lines) once per process and types it:
 * `defineScript<[owner: string, leaseMs: number], 0 | 1>('token-release')`.
 */
export function defineScript<Args extends readonly ScriptArg[], Reply>(name: string): LuaScript<Args, Reply> {
  let script = cache.get(name);
  if (!script) {
    const source = expandIncludes(luaSource(`${name}.lua`));
    script = { name, source, sha: createHash('sha1').update(source).digest('hex') };
    cache.set(name, script);
  }
  return script as unknown as LuaScript<Args, Reply>;
}

/**
 * A script an entry above the core ships itself (its text embedded like the core's), for the one
 * script path: RedisGateway.run, EVALSHA first and EVAL once after NOSCRIPT.
 */
export function scriptOf<Args extends readonly ScriptArg[], Reply>(
  name: string,
  source: string,
): LuaScript<Args, Reply> {
  return { name, source, sha: createHash('sha1').update(source).digest('hex') } as LuaScript<Args, Reply>;
}

function expandIncludes(source: string): string {
  return source.replace(/^--!include (\S+)\s*$/gm, (_line, file: string) => luaSource(file));
}

function luaSource(file: string): string {
  const source = LUA_SOURCES[file];
  if (source === undefined) throw new Error(`no Lua script ${file} in lib/core/scripts`);
  return source;
}
