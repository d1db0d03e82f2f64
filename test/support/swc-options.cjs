// How the suite turns TypeScript into JavaScript, in Jest (jest.config.js) and in the worker
// processes the specs start (ts-register.cjs): SWC strips the types of each file on its own (the type
// check is `npm run typecheck`) and emits the decorator metadata Nest's injection reads, with the
// class-field semantics of tsconfig.json's ES2022 target.
'use strict';

/** @param {'commonjs' | 'es6'} moduleType */
function swcOptions(moduleType = 'commonjs') {
  return {
    swcrc: false,
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: moduleType },
    sourceMaps: 'inline',
  };
}

module.exports = { swcOptions };
