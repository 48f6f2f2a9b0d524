import { createRequire } from 'node:module';
import { join } from 'node:path';

/**
 * `require` for the project's dependencies, resolved as the build (CommonJS) resolves them, or from
 * the working directory where tests run the sources as ESM (no `__filename` there).
 */
export function dependencyRequire(): NodeJS.Require {
  return createRequire(typeof __filename === 'string' ? __filename : join(process.cwd(), 'package.json'));
}
