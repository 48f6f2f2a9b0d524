import { describe, expect, it } from 'vitest';
import { presentJobResult } from './job-results';

describe('presentJobResult', () => {
  it('shows grant-expiry amounts of micro-credits as credits, whether a bigint or integer text', () => {
    expect(presentJobResult('grant-expiry', { grants: 1, wallets: 1, amount: 833_333n })).toEqual({ grants: 1, wallets: 1, amount: '0.833333' });
    expect(presentJobResult('grant-expiry', { grants: 2, wallets: 1, amount: '12500000' })).toEqual({ grants: 2, wallets: 1, amount: '12.500000' });
    expect(presentJobResult('grant-expiry', { grants: 0, wallets: 0, amount: 0n })).toEqual({ grants: 0, wallets: 0, amount: '0.000000' });
  });

  it('keeps an amount already in credits, and other jobs results as they are', () => {
    expect(presentJobResult('grant-expiry', { grants: 1, wallets: 1, amount: '0.833333' })).toEqual({ grants: 1, wallets: 1, amount: '0.833333' });
    const sweep = { voidedNeverStarted: 1, reservationExpired: 0, unreachable: 0, reissued: 0, forcedSettlements: 0 };
    expect(presentJobResult('expiry-sweep', sweep)).toBe(sweep);
  });
});
