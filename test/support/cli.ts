import { execFile } from 'node:child_process';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { transformFile } from '@swc/core';

const ROOT = resolve(__dirname, '../..');

async function sources(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await sources(path)));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') && !entry.name.endsWith('.d.ts')) found.push(path);
  }
  return found;
}

/**
 * Compiles src/ and migrations/ (or the folders `roots` names) with SWC (the options `nest build`
 * uses) into a private folder under node_modules/.cache, so a test can run the CLI as a real process
 * without touching dist/ (which other runs may be building or using). Returns the folder; remove it
 * with `rm` after.
 */
export async function buildForTest(roots: readonly string[] = ['src', 'migrations']): Promise<string> {
  const out = join(ROOT, 'node_modules', '.cache', 'dl-billing-test-build', `${process.pid}-${Date.now()}`);
  const files = (await Promise.all(roots.map((root) => sources(join(ROOT, root))))).flat();
  await Promise.all(
    files.map(async (file) => {
      const { code } = await transformFile(file, {
        swcrc: false,
        module: { type: 'commonjs' },
        jsc: {
          target: 'es2022',
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
          keepClassNames: true,
          // Imports across modules name them (`src/ledger/…`, tsconfig.json's paths): written back as relative paths.
          baseUrl: ROOT,
          paths: { 'src/*': ['./src/*'] },
        },
      });
      const target = join(out, relative(ROOT, file)).replace(/\.ts$/, '.js');
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, code);
    }),
  );
  return out;
}

export async function removeBuild(out: string): Promise<void> {
  await rm(out, { recursive: true, force: true });
}

/** Runs `node <build>/src/cli.js ...args` (in the project's folder, or `cwd`) and returns its exit code and output. */
export function runCli(
  build: string,
  args: string[],
  env: Record<string, string>,
  cwd = ROOT,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return runBuilt(build, 'src/cli.js', args, env, { cwd });
}

/** Runs `node <build>/<script> ...args` (in the project's folder, or `cwd`) and returns its exit code and output. */
export function runBuilt(
  build: string,
  script: string,
  args: string[],
  env: Record<string, string>,
  { cwd = ROOT, timeoutMs = 60_000 }: { cwd?: string; timeoutMs?: number } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    execFile(
      process.execPath,
      [join(build, script), ...args],
      { cwd, env: { ...process.env, ...env }, timeout: timeoutMs },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolvePromise({ code, stdout, stderr });
      },
    );
  });
}
