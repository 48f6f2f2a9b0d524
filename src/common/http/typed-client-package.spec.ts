import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const DIR = resolve('clients/typescript');

/**
 * The typed client is a package another service can install: `npm run build` in its folder (run by
 * `npm pack` / `npm publish` as prepack) writes the JavaScript and the declarations its `exports`
 * name, and what it builds works from plain Node.
 */
describe('the typed client package (clients/typescript)', () => {
  afterAll(() => rmSync(join(DIR, 'dist'), { recursive: true, force: true }));

  it('builds to the files its package.json exports, and the built client makes typed calls', async () => {
    const pkg = JSON.parse(readFileSync(join(DIR, 'package.json'), 'utf8')) as {
      exports: { '.': { types: string; import: string } };
      files: string[];
    };
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(DIR, 'tsconfig.json')], { stdio: 'pipe' });
    for (const file of [pkg.exports['.'].types, pkg.exports['.'].import]) expect(existsSync(join(DIR, file)), file).toBe(true);
    expect(pkg.files).toContain('dist');
    expect(readFileSync(join(DIR, pkg.exports['.'].types), 'utf8')).toContain('createBillingClient');

    const built = (await import(
      pathToFileURL(join(DIR, pkg.exports['.'].import)).href
    )) as typeof import('../../../clients/typescript/src/index');
    const seen: string[] = [];
    const client = built.createBillingClient({
      baseUrl: 'http://billing.test',
      apiKey: 'dlb_k',
      fetch: async (request) => {
        seen.push(`${request.method} ${request.url} ${request.headers.get('authorization')}`);
        return new Response(JSON.stringify({ accountId: 'acc_1' }), { status: 200, headers: { 'content-type': 'application/json' } });
      },
    });
    const { data } = await client.GET('/v1/accounts/{id}/wallet', { params: { path: { id: 'acc_1' } } });
    expect(seen).toEqual(['GET http://billing.test/v1/accounts/acc_1/wallet Bearer dlb_k']);
    expect(data).toEqual({ accountId: 'acc_1' });
  }, 120_000);
});
