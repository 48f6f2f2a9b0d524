import { describe, expect, it } from 'vitest';
import { explain } from './explain';

describe('explain', () => {
  it('says what each kind of transaction did, in credits', () => {
    expect(
      explain({
        kind: 'settlement',
        amount: -1_250_000n,
        holdId: 'h1',
        grantId: null,
        reference: 'rt_1',
        explanation: {
          held: '4000000',
          charged: '1250000',
          released: '2750000',
          expiredAtOnce: [{ grantId: 'g1', amount: '500000' }],
          debtRepaid: '0',
        },
      }),
    ).toBe(
      'Charged 1.250000 of 4.000000 credits held for rt_1 (hold h1); 2.750000 released (0.500000 of expired grant g1 expired at once).',
    );
    expect(
      explain({
        kind: 'expiry',
        amount: -3_000_000n,
        holdId: null,
        grantId: 'g2',
        reference: null,
        explanation: { source: 'plan_allowance', expired: '3000000', expiresAt: '2027-01-01T00:00:00.000Z' },
      }),
    ).toBe('3.000000 unused credits of plan allowance grant g2 expired at 2027-01-01T00:00:00.000Z.');
    expect(
      explain({
        kind: 'expiry',
        amount: -5_000_000n,
        holdId: null,
        grantId: 'g3',
        reference: null,
        explanation: { source: 'admin', expired: '5000000', expiresAt: '2027-01-01T00:00:00.000Z' },
      }),
    ).toBe('5.000000 unused credits of admin grant g3 expired at 2027-01-01T00:00:00.000Z.');
    expect(
      explain({
        kind: 'reservation',
        amount: -3_000_000n,
        holdId: 'h2',
        grantId: null,
        reference: 'rt_2',
        explanation: {
          held: '3000000',
          parts: [
            { grantId: 'g4', amount: '1000000', source: 'admin', expiresAt: null },
            { grantId: 'g5', amount: '2000000', source: 'top_up', expiresAt: null },
          ],
        },
      }),
    ).toBe('Reserved 3.000000 credits for rt_2 (hold h2): 1.000000 from admin grant g4, 2.000000 from top-up grant g5.');
    expect(
      explain({
        kind: 'adjustment',
        amount: -500_000n,
        holdId: 'h1',
        grantId: null,
        reference: null,
        explanation: { previousCharge: '1000000', charged: '1500000', delta: '500000', debt: '200000', reason: 'late event' },
      }),
    ).toBe(
      'Charge of hold h1 corrected from 1.000000 to 1.500000 (late event): 0.500000 more charged; 0.200000 could not be paid and is owed.',
    );
    expect(
      explain({
        kind: 'grant',
        amount: 2_000_000n,
        holdId: null,
        grantId: 'g3',
        reference: null,
        explanation: { source: 'promotion', reason: 'welcome', expiresAt: null, repaid: '0' },
      }),
    ).toBe('Granted (promotion): 2.000000 credits, not expiring — welcome.');
  });

  it('explains a claw-back of a top-up as one: the charge, how it was reversed, the Checkout session and the amount', () => {
    const clawBack = (explanation: Record<string, unknown>) =>
      explain({ kind: 'adjustment', amount: -25_000_000n, holdId: null, grantId: 'g_top', reference: 'ch_1', explanation });
    expect(
      clawBack({
        clawedBack: '25000000',
        grantId: 'g_top',
        cause: 'refund',
        chargeId: 'ch_1',
        disputeId: null,
        topUpSession: 'cs_1',
        reversed: '25000000',
      }),
    ).toBe('Clawed back 25.000000 credits of the top-up paid in Checkout session cs_1 (grant g_top): Stripe charge ch_1 was refunded.');
    expect(
      clawBack({
        clawedBack: '10000000',
        grantId: 'g_top',
        cause: 'dispute',
        chargeId: 'ch_1',
        disputeId: 'dp_1',
        topUpSession: 'cs_1',
        reversed: '75000000',
      }),
    ).toBe(
      'Clawed back 10.000000 credits of the top-up paid in Checkout session cs_1 (grant g_top): Stripe charge ch_1 was disputed (dispute dp_1); 75.000000 reversed, only 10.000000 of them left unspent.',
    );
  });

  it('gives the reason of a settlement', () => {
    expect(
      explain({
        kind: 'settlement',
        amount: 0n,
        holdId: 'h1',
        grantId: null,
        reference: 'rt_1',
        explanation: { held: '1000000', charged: '0', released: '1000000', reason: 'launch failed: image pull' },
      }),
    ).toBe('Charged 0.000000 of 1.000000 credits held for rt_1 (hold h1); 1.000000 released — launch failed: image pull.');
  });
});
