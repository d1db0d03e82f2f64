import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A Lua script loaded once from lib/core/scripts, with its SHA1 for EVALSHA. */
export interface LuaScript {
  readonly name: string;
  readonly source: string;
  readonly sha: string;
}

const SCRIPTS_DIR = join(__dirname, 'scripts');
const cache = new Map<string, LuaScript>();

/** Loads `scripts/<name>.lua` (resolving `--!include other.lua` lines) once per process. */
export function loadScript(name: string): LuaScript {
  let script = cache.get(name);
  if (!script) {
    const source = expandIncludes(readFileSync(join(SCRIPTS_DIR, `${name}.lua`), 'utf8'));
    script = { name, source, sha: createHash('sha1').update(source).digest('hex') };
    cache.set(name, script);
  }
  return script;
}

function expandIncludes(source: string): string {
  return source.replace(/^--!include (\S+)\s*$/gm, (_line, file: string) =>
    readFileSync(join(SCRIPTS_DIR, file), 'utf8'),
  );
}
