import { describe, expect, it } from 'vitest';
import { csrfToken, csrfValid, signSession } from './admin-session';
import { credits, creditsInDollars, dollars, duration, esc, label } from './render';

describe('console formatting', () => {
  it('shows credits exactly, with separators and at least two decimals', () => {
    expect(credits('1234.500000')).toBe('1,234.50');
    expect(credits('0.166667')).toBe('0.166667');
    expect(credits('-3.000000')).toBe('-3.00');
    expect(credits('1000000.000001')).toBe('1,000,000.000001');
  });

  it('shows cents as dollars and seconds as a duration', () => {
    expect(dollars(9400)).toBe('$94.00');
    expect(dollars(123456)).toBe('$1,234.56');
    expect(dollars(-5)).toBe('-$0.05');
    expect(duration(3900)).toBe('1 h 05 min');
    expect(duration(125)).toBe('2 min 05 s');
  });

  it('values credits in dollars exactly, rounding only the final cent', () => {
    expect(creditsInDollars('200.000000', 30)).toBe('$60.00');
    expect(creditsInDollars('0.016667', 30)).toBe('$0.01');
    expect(creditsInDollars('0.016666', 30)).toBe('$0.00');
    expect(creditsInDollars('-1.500000', 30)).toBe('-$0.45');
    expect(creditsInDollars('123456789.999999', 30)).toBe('$37,037,037.00');
    expect(creditsInDollars('not credits', 30)).toBe('');
  });

  it('labels camelCase columns in words and escapes text', () => {
    expect(label('expectedMrrCents')).toBe('Expected MRR');
    expect(label('subscriptionStatus')).toBe('Subscription status');
    expect(label('someNewColumn')).toBe('Some new column');
    expect(esc('<a href="x">\'')).toBe('&lt;a href=&quot;x&quot;&gt;&#39;');
  });
});

describe('console CSRF token', () => {
  it('belongs to one session of one key', () => {
    const hash = 'a'.repeat(64);
    const one = signSession('key_1', hash, 1_000).split('.')[2]!;
    const two = signSession('key_1', hash, 2_000).split('.')[2]!;
    const token = csrfToken(hash, one);
    expect(csrfValid(token, token)).toBe(true);
    expect(csrfValid(token, csrfToken(hash, two))).toBe(false);
    expect(csrfValid(token, csrfToken('b'.repeat(64), one))).toBe(false);
    expect(csrfValid(token, undefined)).toBe(false);
    expect(csrfValid(token, '')).toBe(false);
  });
});
