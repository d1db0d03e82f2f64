// Nest's serverless webpack config (docs.nestjs.com/faq/serverless): everything bundled
// (`externals: []`), Nest's lazily loaded optional modules ignored when they are not installed.
module.exports = (options, webpack) => {
  const lazyImports = [
    '@nestjs/microservices/microservices-module',
    '@nestjs/websockets/socket-module',
    '@nestjs/microservices',
    '@nestjs/websockets',
    'class-transformer',
    'class-validator',
  ];
  return {
    ...options,
    externals: [],
    output: { ...options.output, libraryTarget: 'commonjs2' },
    plugins: [
      ...options.plugins,
      new webpack.IgnorePlugin({
        checkResource(resource) {
          if (lazyImports.includes(resource)) {
            try {
              require.resolve(resource);
            } catch {
              return true;
            }
          }
          return false;
        },
      }),
    ],
  };
};
