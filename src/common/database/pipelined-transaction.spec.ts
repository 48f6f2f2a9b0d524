import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { quoted } from './pipelined-transaction';

describe('quoted', () => {
  it('writes every string as pg.escapeLiteral does', () => {
    const samples = [
      '',
      'plain',
      "it's",
      "''",
      'back\\slash',
      "both ' and \\ and \\' and '\\",
      '{"explanation":"a \\"quoted\\" word, l\'été"}',
      'line\nbreak\ttab\u0000?',
      'ünïcödé 🎉 \u2028',
    ];
    for (const s of samples) expect(quoted(s)).toBe(pg.escapeLiteral(s));
  });
});
