import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envSchema } from './config.schema';

const ROOT = join(__dirname, '..', '..', '..');

/**
 * An operator finds a variable in the README's table or in the doc of the part it concerns (as the
 * README says): each variable the service reads must be named, in backticks, in one of them.
 */
describe('the configuration variables', () => {
  it('are each named in README.md or a doc of docs/', () => {
    const files = [
      'README.md',
      ...readdirSync(join(ROOT, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
    ];
    const docs = files.map((f) => readFileSync(join(ROOT, f), 'utf8')).join('\n');
    const variables = Object.keys(envSchema.shape);
    expect(variables.length).toBeGreaterThan(40);
    expect(variables.filter((v) => !docs.includes(`\`${v}\``))).toEqual([]);
  });
});
