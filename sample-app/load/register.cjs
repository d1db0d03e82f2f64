// `node -r ./sample-app/load/register.cjs file.ts`: how the demo and its app workers load TypeScript.
// ts-node with SWC (types stripped per file, the decorator metadata Nest reads, tsconfig.json's other
// settings): each app worker starts in about a third of the CPU that TypeScript's own transpiler took.
'use strict';
require('ts-node').register({ swc: true });
