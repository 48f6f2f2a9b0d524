import { describe, expect, it } from 'vitest';
import { PlanCatalog } from 'src/plan-catalog/plan-catalog';
import { BYTES_PER_GIB } from 'src/pricing/ancillary-prices';
import { movementLines, teamFees, unpricedLines } from './statement';
import type { Movement } from './statement.store';

const base: Movement = {
  transactionId: '1',
  kind: 'grant',
  grantSource: null,
  clawback: false,
  issued: 0n,
  consumption: 0n,
  expired: 0n,
  runtime: null,
  ancillaryKind: null,
};
const small = { environment: 'python', sizeClass: 'small', accelerator: null };

describe('statement lines', () => {
  it('splits every movement by what it was for, so that the lines sum to the change of balance', () => {
    const list: Movement[] = [
      { ...base, grantSource: 'plan_allowance', issued: -50_000_000n },
      { ...base, kind: 'top-up', grantSource: 'top_up', issued: -100_000_000n },
      { ...base, kind: 'adjustment', clawback: true, issued: 30_000_000n },
      { ...base, kind: 'settlement', consumption: 1_000_000n, runtime: { ...small, runtimeId: 'rt_1' } },
      { ...base, kind: 'adjustment', consumption: 500_000n, runtime: { ...small, runtimeId: 'rt_1' } },
      { ...base, kind: 'settlement', consumption: 2_000_000n, expired: 3_000_000n, runtime: { ...small, runtimeId: 'rt_2' } },
      { ...base, kind: 'settlement', consumption: 137n, ancillaryKind: 'snapshot' },
      { ...base, kind: 'expiry', expired: 10_000_000n },
    ];
    const lines = movementLines(list);
    expect(lines.map((l) => [l.section, l.credits, l.count])).toEqual([
      ['included_credits', 50_000_000n, 1],
      ['top_ups', 100_000_000n, 1],
      ['runtime_charges', -3_500_000n, 2],
      ['ancillary_charges', -137n, 1],
      ['expiries', -13_000_000n, 2],
      ['claw_backs', -30_000_000n, 1],
    ]);
    const sum = lines.reduce((s, l) => s + l.credits, 0n);
    const change = list.reduce((s, m) => s - m.issued - m.consumption - m.expired, 0n);
    expect(sum).toBe(change);
  });

  it('shows unpriced usage with its quantity, what the plan includes and what is beyond it', () => {
    const free = PlanCatalog.fromFile('config/plans.json').plan('free');
    const hourMs = 3_600_000n;
    // 20 GiB of egress, 1 GiB of snapshots for 730 hours (1 GiB-month).
    const lines = unpricedLines(
      [
        { accountId: 'a', kind: 'egress', priced: false, versions: ['2026-12-01'], quantity: 20n * BYTES_PER_GIB, amount: 0n, charged: 0n },
        {
          accountId: 'a',
          kind: 'snapshot',
          priced: false,
          versions: ['2026-12-01'],
          quantity: BYTES_PER_GIB * 730n * hourMs,
          amount: 0n,
          charged: 0n,
        },
        { accountId: 'a', kind: 'volume', priced: true, versions: ['x'], quantity: 1n, amount: 1n, charged: 1n },
      ],
      free,
    );
    expect(lines).toEqual([
      expect.objectContaining({ unit: 'GiB', quantity: 20_000_000n, included: 10_000_000n, beyondIncluded: 10_000_000n, credits: 0n }),
      expect.objectContaining({ unit: 'GiB-month', quantity: 1_000_000n, included: 5_000_000n, beyondIncluded: 0n }),
    ]);
  });

  describe('Team fees', () => {
    const at = new Date('2031-03-05T00:00:00Z');
    const prices = { base: { priceId: 'price_base', unitAmountCents: 4900 }, seat: { priceId: 'price_seat', unitAmountCents: 1500 } };
    const invoice = { invoiceId: 'in_1', status: 'paid', periodStart: at, periodEnd: at, seatQuantity: 3 };
    const line = (priceId: string, quantity: number, amountCents: number, proration = false) => ({
      priceId,
      quantity,
      amountCents,
      proration,
      description: null,
    });
    const fees = (row: Parameters<typeof teamFees>[0][number]) => teamFees([row], prices).map((f) => [f.description, f.amountCents]);

    it("are the sums of the invoice's lines of each price, prorations included, and sum to its total", () => {
      const lines = [
        line('price_seat', 2, -1500, true),
        line('price_seat', 3, 2250, true),
        line('price_base', 1, 4900),
        line('price_seat', 3, 4500),
      ];
      expect(fees({ ...invoice, lines, totalCents: 10150 })).toEqual([
        ['Team base fee', 4900],
        ['Team seats: 3 × $15.00, prorations +$7.50', 5250],
      ]);
    });

    it('show what the total has beyond the base and seat lines (a discount, tax) as a line of its own', () => {
      expect(fees({ ...invoice, lines: [line('price_base', 1, 4900), line('price_seat', 3, 4500)], totalCents: 8400 })).toEqual([
        ['Team base fee', 4900],
        ['Team seats: 3 × $15.00', 4500],
        ['Other invoice items (discounts, tax, other lines)', -1000],
      ]);
    });

    it("fall back to the plan's prices, said so, for an invoice recorded without its amounts", () => {
      expect(fees({ ...invoice, lines: null, totalCents: null })).toEqual([
        ["Team base fee (the plan's prices: the invoice's amounts were not recorded)", 4900],
        ["Team seats: 3 × $15.00 (the plan's prices: the invoice's amounts were not recorded)", 4500],
      ]);
    });
  });
});
