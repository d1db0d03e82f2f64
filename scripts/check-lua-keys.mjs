#!/usr/bin/env node
// `npm run check:lua-keys` (part of `npm run check`): every Lua script in lib/ touches only keys it declares
// in KEYS. Redis Cluster needs it for slot routing, Dragonfly refuses an undeclared key unless started with
// --default_lua_flags=allow-undeclared-keys (docs/SERVERS.md), and a key built inside a script escapes the
// prefix an ACL grants. Each script is parsed as Redis runs it (its `--!include` files inlined) with
// luaparse, a Lua 5.1 parser, and every `redis.call` / `redis.pcall` is checked:
//
//   - the command is a literal name in COMMANDS below (which arguments are keys), or an ARGV[n] that the
//     script's header documents as `ARGV[n] 'PUBLISH' or 'SPUBLISH'` (a channel, not a key);
//   - each key argument is KEYS[...] or a name every binding of which is one: `local lock = KEYS[1]`, a
//     function parameter that every call passes such a value, `for _, key in ipairs(KEYS)`.
//
// Anything else (a key from ARGV, a string built in the script, a command the table does not know, such
// as KEYS or SCAN) fails the check with the file, line and call. The analysis goes by name, not by scope,
// so a name used for a key in one place and for something else in another is refused too: rename one.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import luaparse from 'luaparse';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Which arguments (after the command name) are keys: 'first', 'all', or 'none'. */
const COMMANDS = {
  none: ['TIME', 'PING', 'PUBLISH', 'SPUBLISH', 'ECHO'],
  first: [
    'TYPE', 'GET', 'SET', 'PTTL', 'PEXPIRE', 'INCR', 'INCRBY',
    'HGET', 'HMGET', 'HSET', 'HDEL', 'HLEN', 'HEXISTS', 'HINCRBY', 'HGETALL',
    'ZADD', 'ZREM', 'ZRANGE', 'ZRANGEBYSCORE', 'ZREMRANGEBYSCORE', 'ZCARD', 'ZSCORE',
    'XADD', 'XREVRANGE', 'XTRIM',
  ],
  all: ['DEL', 'EXISTS', 'UNLINK'],
}; // prettier-ignore
/**
 * Known exceptions, each a script and the one key expression it may use, with the reason; printed on every
 * run so that none hides. Add none without a line in docs/SERVERS.md ("Dragonfly").
 */
const EXCEPTIONS = [
  {
    file: 'lib/core/scripts/registry-read.lua',
    key: 'record',
    why:
      "the inspection registry's engine records are named by the registry zset's members (ARGV[1] .. id): " +
      'one slot, `{~inspect}`, so Redis Cluster runs it; Dragonfly refuses it without allow-undeclared-keys, ' +
      'which list(), inspect() and forceRelease() need there (docs/SERVERS.md)',
  },
];

const KEY_ARGS = new Map(Object.entries(COMMANDS).flatMap(([kind, names]) => names.map((n) => [n, kind])));

function luaFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return luaFiles(full);
    return e.name.endsWith('.lua') ? [full] : [];
  });
}

/** The script as Redis gets it, with a map from its lines back to file:line. */
function inline(file, seen = new Set()) {
  const lines = [];
  const origin = [];
  fs.readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      const include = /^--!include (\S+)/.exec(line);
      if (include) {
        const target = path.join(path.dirname(file), include[1]);
        if (seen.has(target)) return; // included once, as the engine does
        seen.add(target);
        const inner = inline(target, seen);
        lines.push(...inner.lines);
        origin.push(...inner.origin);
      } else {
        lines.push(line);
        origin.push(`${path.relative(root, file)}:${i + 1}`);
      }
    });
  return { lines, origin };
}

/** Walks every node of a luaparse AST. */
function walk(node, visit, parent, skip = new Set()) {
  if (!node || typeof node !== 'object' || skip.has(node)) return;
  if (Array.isArray(node)) {
    for (const child of node) walk(child, visit, parent, skip);
    return;
  }
  if (typeof node.type !== 'string') return;
  visit(node, parent);
  for (const [field, value] of Object.entries(node)) {
    if (field !== 'loc' && field !== 'range') walk(value, visit, node, skip);
  }
}

const isKeysIndex = (e) =>
  e?.type === 'IndexExpression' && e.base.type === 'Identifier' && e.base.name === 'KEYS';
const argvIndex = (e) =>
  e?.type === 'IndexExpression' &&
  e.base.type === 'Identifier' &&
  e.base.name === 'ARGV' &&
  e.index.type === 'NumericLiteral'
    ? e.index.value
    : undefined;
const isRedisCall = (e) =>
  e?.type === 'CallExpression' &&
  e.base.type === 'MemberExpression' &&
  e.base.base.type === 'Identifier' &&
  e.base.base.name === 'redis' &&
  (e.base.identifier.name === 'call' || e.base.identifier.name === 'pcall');

/** True where an identifier is a call's callee, a declaration's name or a field name (`t.name`). */
const namesItself = (node, parent) =>
  (parent.type === 'CallExpression' && parent.base === node) ||
  (parent.type === 'FunctionDeclaration' && parent.identifier === node) ||
  (parent.type === 'MemberExpression' && parent.identifier === node);

function check(file) {
  const { lines, origin } = inline(file);
  const source = lines.join('\n');
  let ast;
  try {
    ast = luaparse.parse(source, { luaVersion: '5.1', locations: true, ranges: true, comments: true });
  } catch (error) {
    const line = /^\[(\d+):/.exec(error.message)?.[1];
    return [`${origin[Number(line) - 1] ?? path.relative(root, file)}: not Lua 5.1: ${error.message}`];
  }
  // ARGV indexes the header documents as a pub/sub command name.
  const pubsubArgv = new Set(
    [...source.matchAll(/ARGV\[(\d+)\] '(?:S?PUBLISH)' or '(?:S?PUBLISH)'/g)].map((m) => Number(m[1])),
  );

  // Functions an included helper file declares but this script never calls or passes on: dead code here,
  // left out of both passes (their parameters have no call site to take a key from).
  // A function only called from dead functions is dead too.
  const declared = new Map();
  walk(ast, (node) => {
    if (node.type === 'FunctionDeclaration' && node.identifier?.type === 'Identifier') {
      declared.set(node.identifier.name, node);
    }
  });
  const dead = new Set();
  for (let grew = true; grew;) {
    const used = new Set();
    walk(
      ast,
      (node, parent) => {
        if (
          node.type === 'Identifier' &&
          !(parent?.type === 'FunctionDeclaration' && parent.identifier === node)
        ) {
          used.add(node.name);
        }
      },
      undefined,
      dead,
    );
    grew = false;
    for (const [name, node] of declared) {
      if (!used.has(name) && !dead.has(node)) {
        dead.add(node);
        grew = true;
      }
    }
  }

  // Every binding of every name: [name, expression | {param: fn, index} | 'keys-loop' | 'other'].
  const bindings = new Map();
  const bind = (name, value) => {
    if (!bindings.has(name)) bindings.set(name, []);
    bindings.get(name).push(value);
  };
  const functions = new Map(); // function name -> parameter names
  const calls = new Map(); // function name -> argument lists
  const escapes = new Set(); // functions used as values (not only called): their parameters are unknown
  walk(
    ast,
    (node, parent) => {
      if (node.type === 'LocalStatement' || node.type === 'AssignmentStatement') {
        node.variables.forEach((v, i) => {
          if (v.type !== 'Identifier') return;
          // A local with no value is nil until assigned: the later assignment is the binding that matters.
          if (i < node.init.length) bind(v.name, node.init[i]);
          else if (node.type === 'AssignmentStatement') bind(v.name, 'other');
        });
        // A call returning several values binds the names past the last expression.
        const last = node.init[node.init.length - 1];
        if (last?.type === 'CallExpression') {
          node.variables
            .slice(node.init.length)
            .forEach((v) => v.type === 'Identifier' && bind(v.name, 'other'));
        }
      } else if (node.type === 'FunctionDeclaration') {
        const name = node.identifier?.type === 'Identifier' ? node.identifier.name : undefined;
        node.parameters.forEach((p, index) => {
          if (p.type === 'Identifier') bind(p.name, name ? { param: name, index } : 'other');
        });
        if (name) functions.set(name, node.parameters);
      } else if (node.type === 'ForGenericStatement') {
        const overKeys =
          node.iterators.length === 1 &&
          node.iterators[0].type === 'CallExpression' &&
          node.iterators[0].base.type === 'Identifier' &&
          node.iterators[0].base.name === 'ipairs' &&
          node.iterators[0].arguments[0]?.type === 'Identifier' &&
          node.iterators[0].arguments[0].name === 'KEYS';
        node.variables.forEach((v, i) => bind(v.name, overKeys && i === 1 ? 'keys-loop' : 'other'));
      } else if (node.type === 'ForNumericStatement') {
        bind(node.variable.name, 'other');
      } else if (node.type === 'CallExpression' && node.base.type === 'Identifier') {
        if (!calls.has(node.base.name)) calls.set(node.base.name, []);
        calls.get(node.base.name).push(node.arguments);
      } else if (node.type === 'Identifier' && parent && !namesItself(node, parent)) {
        escapes.add(node.name);
      }
    },
    undefined,
    dead,
  );

  // The greatest set of names whose every binding is a key: start from all, drop until nothing changes.
  const keyNames = new Set(bindings.keys());
  const isKey = (e) => {
    if (!e || typeof e !== 'object') return false;
    if (isKeysIndex(e)) return true;
    if (e.type === 'Identifier') return keyNames.has(e.name);
    if (e.type === 'LogicalExpression')
      return e.operator === 'or' ? isKey(e.left) && isKey(e.right) : isKey(e.right);
    return false;
  };
  const bindingIsKey = (b) => {
    if (b === 'keys-loop') return true;
    if (b === 'other') return false;
    if (b.param !== undefined) {
      const sites = calls.get(b.param) ?? [];
      if (escapes.has(b.param) || sites.length === 0) return false;
      return sites.every((args) => isKey(args[b.index]));
    }
    return isKey(b);
  };
  for (let changed = true; changed;) {
    changed = false;
    for (const name of keyNames) {
      if (!bindings.get(name).every(bindingIsKey)) {
        keyNames.delete(name);
        changed = true;
      }
    }
  }

  const problems = [];
  const where = (node) => origin[node.loc.start.line - 1] ?? `${path.relative(root, file)}:?`;
  const text = (node) => source.slice(node.range[0], node.range[1]);
  walk(
    ast,
    (node) => {
      if (!isRedisCall(node)) return;
      const [command, ...args] = node.arguments;
      let kind;
      if (command?.type === 'StringLiteral') {
        const name = (command.value ?? command.raw.slice(1, -1)).toUpperCase();
        kind = KEY_ARGS.get(name);
        if (!kind) {
          problems.push(
            `${where(node)}: ${name} is not in the table of scripts/check-lua-keys.mjs: ${text(node)}`,
          );
          return;
        }
      } else if (pubsubArgv.has(argvIndex(command))) {
        kind = 'none';
      } else {
        problems.push(
          `${where(node)}: the command name is neither a literal nor a documented pub/sub ARGV: ${text(node)}`,
        );
        return;
      }
      const keys = kind === 'none' ? [] : kind === 'first' ? args.slice(0, 1) : args;
      for (const key of keys) {
        const excused = EXCEPTIONS.some((e) => e.file === path.relative(root, file) && e.key === text(key));
        if (!isKey(key) && !excused)
          problems.push(`${where(node)}: key "${text(key)}" is not from KEYS: ${text(node)}`);
      }
    },
    undefined,
    dead,
  );
  return problems;
}

// Files that other scripts include (helpers such as fence.lua) are checked inside each script that includes
// them, where their functions' call sites are known.
const all = luaFiles(path.join(root, 'lib'));
const included = new Set(
  all.flatMap((f) =>
    [...fs.readFileSync(f, 'utf8').matchAll(/^--!include (\S+)/gm)].map((m) =>
      path.join(path.dirname(f), m[1]),
    ),
  ),
);
const files = all.filter((f) => !included.has(f));
const problems = files.flatMap(check);
if (problems.length > 0) {
  console.error(`Lua scripts touching keys they do not declare in KEYS (${problems.length}):`);
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
console.log(`check-lua-keys: ${files.length} Lua scripts, every key access from KEYS, except:`);
for (const e of EXCEPTIONS) console.log(`  ${e.file}: \`${e.key}\`: ${e.why}`);
