import { describe, expect, it } from 'vitest';
import { toCsv } from './to-csv';

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
