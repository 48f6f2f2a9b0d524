import { afterAll } from 'vitest';
import { removeTempDirs } from './temp-dir';

// A setup file runs again before each test file, also where the files share their worker's imports
// (`isolate: false`), so the folders a file's tests and helpers make are removed after its tests. A
// hook registered where temp-dir.ts is imported would run after the first file that imports it only.
afterAll(removeTempDirs);
