// esbuild single-file bundles of the app: `node esbuild.mjs cjs|esm <outfile>`. Nest's lazily loaded
// optional modules stay external (they are required inside try/catch only when used).
import { build } from 'esbuild';

const [format, outfile] = process.argv.slice(2);
await build({
  entryPoints: ['src/main.ts'],
  bundle: true,
  platform: 'node',
  target: 'node20',
  format,
  outfile,
  logLevel: 'warning',
  external: [
    '@nestjs/microservices',
    '@nestjs/websockets',
    '@nestjs/microservices/microservices-module',
    '@nestjs/websockets/socket-module',
    'class-transformer',
    'class-validator',
  ],
  // An ES module bundle of CommonJS dependencies needs a real `require` for their require() calls.
  banner:
    format === 'esm'
      ? { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" }
      : undefined,
});
