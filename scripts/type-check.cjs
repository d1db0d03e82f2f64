#!/usr/bin/env node
// Type-checks several TypeScript projects in one process, one program each: `tsc -p` for each
// tsconfig given, without loading and warming up the compiler once per project (test:packed checks
// the packed typings under four module resolutions for Nest 11 and two for Nest 12). Prints each
// project's diagnostics; exits 1 when any project has errors.
//   node scripts/type-check.cjs <tsconfig.json>...
'use strict';
const path = require('node:path');
const ts = require('typescript');

const formatHost = {
  getCanonicalFileName: (fileName) => fileName,
  getCurrentDirectory: () => process.cwd(),
  getNewLine: () => '\n',
};

let failed = false;
for (const project of process.argv.slice(2)) {
  const started = Date.now();
  const configFile = path.resolve(project);
  const parsed = ts.getParsedCommandLineOfConfigFile(
    configFile,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.formatDiagnostics([diagnostic], formatHost));
      },
    },
  );
  const program = ts.createProgram({
    rootNames: parsed.fileNames,
    options: parsed.options,
    configFileParsingDiagnostics: parsed.errors,
  });
  // The config file's own errors included (configFileParsingDiagnostics above).
  const diagnostics = ts.getPreEmitDiagnostics(program);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`${path.relative(process.cwd(), configFile)}: ${diagnostics.length} error(s), ${seconds} s`);
  if (diagnostics.length > 0) {
    failed = true;
    console.log(ts.formatDiagnosticsWithColorAndContext(diagnostics, formatHost));
  }
}
process.exit(failed ? 1 : 0);
