import { fileURLToPath } from 'node:url';
import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';
import type { TestUserConfig } from 'vitest/node';

// SWC compiles the tests so that Nest's decorator metadata works as in the build.
const plugins = [swc.vite({ module: { type: 'es6' } })];
// Imports from one module of src/ into another name it: `src/ledger/…` (tsconfig.json's paths).
const resolve = { alias: [{ find: /^src\//, replacement: fileURLToPath(new URL('./src/', import.meta.url)) }] };

// Removes the temporary folders a test file made (test/support/temp-dir.ts) after its tests.
const TEMP_DIRS = 'test/support/temp-dirs-setup.ts';

// `vitest run` (npm test) leaves the fault-injection suite out: it has its own script
// (npm run test:faults) and CI step. A `--project` on the command line replaces this filter.
const defaultProjects: Pick<TestUserConfig, 'project'> = { project: ['!faults'] };

export default defineConfig({
  plugins,
  test: {
    ...defaultProjects,
    projects: [
      {
        plugins,
        resolve,
        test: {
          name: 'unit',
          include: ['src/**/*.spec.ts'],
          setupFiles: [TEMP_DIRS],
          environment: 'node',
          // Some specs read every source file or build a package: 30 s, for a loaded machine.
          testTimeout: 30_000,
          // The specs share a worker's imports, as the HTTP files do (below).
          isolate: false,
        },
      },
      {
        plugins,
        resolve,
        test: {
          name: 'http',
          include: ['test/http/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          setupFiles: [TEMP_DIRS],
          // The files share a worker's imports of the app (8–12 s a file otherwise): nothing in src/ or
          // test/support keeps state from one app or file to the next (docs/benchmarks.md, 2026-12-07).
          isolate: false,
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        plugins,
        resolve,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          setupFiles: [TEMP_DIRS],
          globalSetup: ['test/support/global-setup.ts', 'test/support/kafka-setup.ts', 'test/support/build-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // Integration files share one broker and two cores: run them one at a time.
          fileParallelism: false,
          // They share a worker's imports too, as the HTTP files do: what a file starts (apps, buses,
          // consumers, clients, browsers, servers, processes) it stops in its afterAll, and nothing
          // in src/ or test/support keeps state from one file to the next (docs/benchmarks.md, 2026-12-07).
          isolate: false,
        },
      },
      {
        plugins,
        resolve,
        test: {
          // Its own PostgreSQL, Kafka broker and build (test/faults/): nothing shared is restarted.
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          testTimeout: 240_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
