import { describe, expect, it } from 'vitest';
import { toCsv, wantsCsv } from './to-csv';

const line = (value: string) => toCsv({ columns: ['reason'], items: [{ reason: value }] }).split('\r\n')[1];

describe('toCsv', () => {
  it.each([
    ['=', '=HYPERLINK("http://evil.example","x")', `"'=HYPERLINK(""http://evil.example"",""x"")"`],
    ['+', '+1+cmd|/c calc', `'+1+cmd|/c calc`],
    ['-', '-2+3', `'-2+3`],
    ['@', '@SUM(A1:A2)', `'@SUM(A1:A2)`],
    ['TAB', '\t=1+1', `'\t=1+1`],
    ['CR', '\r=1+1', `"'\r=1+1"`],
  ])('turns text with a leading %s into text a spreadsheet does not evaluate', (_lead, value, expected) => {
    expect(line(value)).toBe(expected);
  });

  it('leaves plain numbers, negative amounts included, and ordinary text as they are', () => {
    expect(line('-12.500000')).toBe('-12.500000');
    expect(line('42')).toBe('42');
    expect(line('a=b, c')).toBe('"a=b, c"');
  });

  it('guards every cell, the header included', () => {
    expect(toCsv({ columns: ['=cmd', 'b'], items: [{ '=cmd': '@x', b: '\tq' }] })).toBe(`'=cmd,b\r\n'@x,'\tq\r\n`);
  });
});

describe('wantsCsv', () => {
  it('follows format=, then the Accept header by weight: JSON when JSON weighs more, CSV on a tie', () => {
    const cases: [string | undefined, string | undefined, boolean][] = [
      ['csv', undefined, true],
      ['json', 'text/csv', false],
      [undefined, undefined, false],
      [undefined, 'text/csv', true],
      [undefined, 'TEXT/CSV; charset=utf-8', true],
      [undefined, 'text/csv, application/json', true],
      [undefined, 'text/csv;q=0.5, application/json', false],
      [undefined, 'application/json;q=0.4, text/csv;q=0.5', true],
      [undefined, 'text/csv;q=0', false],
      [undefined, 'text/csvx', false],
      [undefined, '*/*', false],
    ];
    expect(cases.map(([format, accept]) => wantsCsv(format, accept))).toEqual(cases.map(([, , csv]) => csv));
  });
});
