// Preload (node -r): makes ioredis and iovalkey unresolvable, as in an app that never installed them,
// and records every attempt to load one in globalThis.__blockedAttempts.
'use strict';
const Module = require('node:module');

const BLOCKED = ['ioredis', 'iovalkey'];
const attempts = (globalThis.__blockedAttempts = []);
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (BLOCKED.some((name) => request === name || request.startsWith(`${name}/`))) {
    attempts.push(request);
    const error = new Error(`Cannot find module '${request}'`);
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolve.call(this, request, ...rest);
};
