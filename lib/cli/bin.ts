#!/usr/bin/env node
// The `nestjs-distributed-lock` command (package.json "bin" points at its build).
import { runCli } from './run-cli';

void runCli(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
