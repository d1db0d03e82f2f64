// Preload (node -r): makes the package's optional peers (peerDependenciesMeta … optional) unresolvable,
// as in an app that never installed them, and records every attempt to load one in
// globalThis.__optionalPeerAttempts, so a check can tell "not loaded" from "loaded and swallowed".
'use strict';
const Module = require('node:module');
const path = require('node:path');

const pkg = require(path.resolve(__dirname, '../../../package.json'));
// KEEP_PEERS: optional peers the check still provides (ioredis, which a Redis URL needs).
const kept = (process.env.KEEP_PEERS || '').split(',').filter(Boolean);
const blocked = Object.entries(pkg.peerDependenciesMeta || {})
  .filter(([name, meta]) => meta && meta.optional && !kept.includes(name))
  .map(([name]) => name);
const attempts = (globalThis.__optionalPeerAttempts = []);
globalThis.__optionalPeers = blocked;

// @nestjs/core itself probes for @nestjs/microservices and @nestjs/websockets when it loads (as in
// every Nest app without them); those probes are Nest's, not this package's, and kept apart.
const nestProbes = (globalThis.__nestOptionalProbes = []);
const NEST_PACKAGE = /[\\/]node_modules[\\/]@nestjs[\\/](core|common)[\\/]/;

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (blocked.some((name) => request === name || request.startsWith(`${name}/`))) {
    const from = rest[0] && rest[0].filename;
    (from && NEST_PACKAGE.test(from) ? nestProbes : attempts).push(request);
    const error = new Error(`Cannot find module '${request}'`);
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolve.call(this, request, ...rest);
};
