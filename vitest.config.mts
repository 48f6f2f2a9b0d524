import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

// SWC compiles the tests so that Nest's decorator metadata works as in the build.
const plugins = [swc.vite({ module: { type: 'es6' } })];

export default defineConfig({
  plugins,
  test: {
    projects: [
      {
        plugins,
        test: { name: 'unit', include: ['src/**/*.spec.ts'], environment: 'node' },
      },
      {
        plugins,
        test: {
          name: 'http',
          include: ['test/http/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        plugins,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts', 'test/support/kafka-setup.ts', 'test/support/build-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // Integration files share one broker and two cores: run them one at a time.
          fileParallelism: false,
        },
      },
    ],
  },
});
