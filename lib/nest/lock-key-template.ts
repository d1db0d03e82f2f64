// Past the core's public surface: a key built from arguments is refused with the core's own bad-key
// error (lockKeyError, a 400 at HTTP) and message wording (describe).
import { describe, lockKeyError } from '../core/internal';
import { MAX_MULTI_KEYS } from '../core';
import type { LockKeyFunction } from './interfaces';
import {
  badKeyFunctionResultMessage,
  badKeyPartMessage,
  missingKeyPartMessage,
} from './distributed-lock.messages';

/**
 * Turns the decorated call's `this` and arguments into the lock key (or keys, for a multi-key
 * lock); throws TypeError for bad arguments.
 */
export type LockKeyBuilder = (thisArg: unknown, args: readonly unknown[]) => string | string[];

// `{0}`, `{1.id}`, `{0.items.0.sku}`: an argument index, then property names or array indices.
const PLACEHOLDER = /\{([^{}]*)\}/g;
const REFERENCE = /^(\d+)((?:\.[\w$]+)*)$/;

/**
 * Compiles the decorator's `key` option once, at decoration time (a malformed template is a
 * TypeError then). Values are inserted as they are: braces in user text cannot split a Cluster
 * slot, because the engine percent-encodes them inside the lock's hash tag.
 */
export function compileLockKey(key: unknown, where: string, declaredParams?: number): LockKeyBuilder {
  // A lone function yields exactly one key: a result that is an array would let request data choose
  // how many locks (up to 64) one call takes. Several keys must be declared with an array `key`.
  if (typeof key === 'function') return compileKeyFunction(key as LockKeyFunction, where, false);
  if (Array.isArray(key)) return compileTemplates(key, where, declaredParams);
  if (typeof key !== 'string' || key.length === 0) {
    throw new TypeError(
      `@DistributedLock() on ${where}: "key" must be a non-empty template string or a function, got ${describe(key)} (or an array of templates, for several keys)`,
    );
  }
  return compileTemplate(key, where, declaredParams);
}

/**
 * A key function: one non-empty string, or (`several`: a member of an array `key`) a string or an
 * array of keys. Members of an array are checked by the engine (index named, before any command).
 */
function compileKeyFunction(fn: LockKeyFunction, where: string, several: boolean): LockKeyBuilder {
  return (thisArg, args) => {
    const result: unknown = fn.apply(thisArg, args as unknown[]);
    if (Array.isArray(result)) {
      if (!several) {
        throw lockKeyError(
          'type',
          badKeyFunctionResultMessage(where, 'an array (declare several keys with an array "key": [fn])'),
        );
      }
      return [...(result as string[])];
    }
    if (typeof result !== 'string' || result.length === 0) {
      throw lockKeyError(
        'type',
        badKeyFunctionResultMessage(where, result === '' ? 'an empty string' : describe(result)),
      );
    }
    return result;
  };
}

/** Several templates or key functions: their keys are taken together as a multi-key lock. */
function compileTemplates(keys: readonly unknown[], where: string, declaredParams?: number): LockKeyBuilder {
  if (keys.length === 0 || keys.length > MAX_MULTI_KEYS) {
    throw new RangeError(
      `@DistributedLock() on ${where}: an array "key" must list 1 to ${MAX_MULTI_KEYS} templates, got ${keys.length}`,
    );
  }
  const builders: LockKeyBuilder[] = [];
  for (let i = 0; i < keys.length; i++) {
    const k: unknown = keys[i];
    if (typeof k === 'function') {
      builders.push(compileKeyFunction(k as LockKeyFunction, where, true));
      continue;
    }
    if (typeof k !== 'string' || k.length === 0) {
      throw new TypeError(
        `@DistributedLock() on ${where}: key template at index ${i} must be a non-empty string or a function, got ${describe(k)}`,
      );
    }
    builders.push(compileTemplate(k, where, declaredParams));
  }
  return (thisArg, args) => builders.flatMap((build) => build(thisArg, args));
}

interface Reference {
  placeholder: string;
  index: number;
  path: string[];
}

function compileTemplate(template: string, where: string, declaredParams?: number): LockKeyBuilder {
  const literals: string[] = [];
  const references: Reference[] = [];
  let last = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    const placeholder = match[1]!;
    const parsed = REFERENCE.exec(placeholder);
    if (!parsed) {
      throw new TypeError(
        `@DistributedLock() on ${where}: key template "${template}" has an invalid placeholder {${placeholder}}; ` +
          'use {index} or {index.property}, e.g. "order:{0}" or "order:{1.id}"',
      );
    }
    literals.push(template.slice(last, match.index));
    references.push({
      placeholder,
      index: Number(parsed[1]),
      path: parsed[2] ? parsed[2].slice(1).split('.') : [],
    });
    last = match.index! + match[0].length;
  }
  literals.push(template.slice(last));
  if (literals.some((text) => /[{}]/.test(text))) {
    throw new TypeError(
      `@DistributedLock() on ${where}: key template "${template}" has an unmatched "{" or "}"`,
    );
  }
  const beyond = references.find((ref) => declaredParams !== undefined && ref.index >= declaredParams);
  if (beyond) {
    throw new TypeError(
      `@DistributedLock() on ${where}: key template "${template}" uses {${beyond.placeholder}}, ` +
        `but the method declares ${declaredParams} parameter${declaredParams === 1 ? '' : 's'}`,
    );
  }
  if (references.length === 0) return () => template;
  return (_thisArg, args) => {
    let key = literals[0]!;
    references.forEach((ref, i) => {
      key += keyPart(template, ref, args) + literals[i + 1]!;
    });
    return key;
  };
}

function keyPart(template: string, ref: Reference, args: readonly unknown[]): string {
  let value: unknown = args[ref.index];
  if (ref.index >= args.length || value === undefined) {
    throw lockKeyError(
      'type',
      missingKeyPartMessage(template, ref.placeholder, `needs argument ${ref.index}, which is missing`),
    );
  }
  let walked = String(ref.index);
  for (const name of ref.path) {
    if (value === null || value === undefined) {
      throw lockKeyError(
        'type',
        missingKeyPartMessage(template, ref.placeholder, `cannot read "${name}": ${walked} is ${value}`),
      );
    }
    value = (value as Record<string, unknown>)[name];
    walked += `.${name}`;
  }
  if (value === undefined || value === null) {
    throw lockKeyError('type', missingKeyPartMessage(template, ref.placeholder, `is ${value}`));
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value))
      throw lockKeyError('type', badKeyPartMessage(template, ref.placeholder, String(value)));
    return String(value);
  }
  if (typeof value !== 'string')
    throw lockKeyError('type', badKeyPartMessage(template, ref.placeholder, describe(value)));
  if (value.length === 0)
    throw lockKeyError('type', missingKeyPartMessage(template, ref.placeholder, 'is an empty string'));
  return value;
}
