import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { billingCycle, calendarMonth, daysInMonth, nextReset, periodContains, periodFor, type Period } from './periods';

const d = (iso: string) => new Date(iso);
const iso = (p: Period) => [p.start.toISOString(), p.end.toISOString()];

describe('daysInMonth', () => {
  it('knows the Gregorian leap years', () => {
    expect(daysInMonth(2028, 1)).toBe(29);
    expect(daysInMonth(2027, 1)).toBe(28);
    expect(daysInMonth(2100, 1)).toBe(28); // divisible by 100, not by 400
    expect(daysInMonth(2000, 1)).toBe(29); // divisible by 400
    expect(daysInMonth(2026, 3)).toBe(30);
    expect(daysInMonth(2026, 11)).toBe(31);
  });
});

describe('calendarMonth', () => {
  it('is [1st 00:00, next 1st 00:00) in UTC', () => {
    expect(iso(calendarMonth(d('2026-12-02T09:00:00Z')))).toEqual(['2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
    expect(iso(calendarMonth(d('2028-02-29T23:59:59.999Z')))).toEqual(['2028-02-01T00:00:00.000Z', '2028-03-01T00:00:00.000Z']);
  });

  it('puts the boundary instant in the next month', () => {
    expect(iso(calendarMonth(d('2027-01-01T00:00:00.000Z')))[0]).toBe('2027-01-01T00:00:00.000Z');
    expect(iso(calendarMonth(d('2026-12-31T23:59:59.999Z')))[0]).toBe('2026-12-01T00:00:00.000Z');
  });

  it('uses UTC, not the offset the instant was written in', () => {
    expect(iso(calendarMonth(d('2026-12-01T00:30:00+01:00')))[0]).toBe('2026-11-01T00:00:00.000Z');
  });

  it('refuses an invalid date', () => {
    expect(() => calendarMonth(new Date('nope'))).toThrow(RangeError);
  });
});

describe('billingCycle', () => {
  it('runs monthly from the anchor day and time', () => {
    const anchor = d('2026-03-15T00:00:00Z');
    expect(iso(billingCycle(anchor, d('2026-03-20T00:00:00Z')))).toEqual(['2026-03-15T00:00:00.000Z', '2026-04-15T00:00:00.000Z']);
    expect(iso(billingCycle(anchor, d('2026-04-01T00:00:00Z')))).toEqual(['2026-03-15T00:00:00.000Z', '2026-04-15T00:00:00.000Z']);
    expect(iso(billingCycle(anchor, d('2026-12-31T12:00:00Z')))).toEqual(['2026-12-15T00:00:00.000Z', '2027-01-15T00:00:00.000Z']);
    expect(iso(billingCycle(anchor, d('2027-01-01T00:00:00Z')))).toEqual(['2026-12-15T00:00:00.000Z', '2027-01-15T00:00:00.000Z']);
  });

  it('puts the exact boundary instant in the next cycle', () => {
    const anchor = d('2026-03-15T00:00:00Z');
    expect(iso(billingCycle(anchor, d('2026-04-15T00:00:00.000Z')))[0]).toBe('2026-04-15T00:00:00.000Z');
    expect(iso(billingCycle(anchor, d('2026-04-14T23:59:59.999Z')))[0]).toBe('2026-03-15T00:00:00.000Z');
    expect(iso(billingCycle(anchor, anchor))[0]).toBe('2026-03-15T00:00:00.000Z');
  });

  it('clamps Jan 31 to Feb 28, or Feb 29 in a leap year', () => {
    expect(iso(billingCycle(d('2027-01-31T00:00:00Z'), d('2027-02-10T00:00:00Z')))).toEqual([
      '2027-01-31T00:00:00.000Z',
      '2027-02-28T00:00:00.000Z',
    ]);
    expect(iso(billingCycle(d('2028-01-31T00:00:00Z'), d('2028-02-10T00:00:00Z')))).toEqual([
      '2028-01-31T00:00:00.000Z',
      '2028-02-29T00:00:00.000Z',
    ]);
    expect(iso(billingCycle(d('2028-01-31T00:00:00Z'), d('2028-02-29T00:00:00Z')))).toEqual([
      '2028-02-29T00:00:00.000Z',
      '2028-03-31T00:00:00.000Z',
    ]);
  });

  it('treats 2100 as not leap and 2000 as leap', () => {
    expect(iso(billingCycle(d('2100-01-30T00:00:00Z'), d('2100-02-15T00:00:00Z')))[1]).toBe('2100-02-28T00:00:00.000Z');
    expect(iso(billingCycle(d('2000-01-30T00:00:00Z'), d('2000-02-15T00:00:00Z')))[1]).toBe('2000-02-29T00:00:00.000Z');
    expect(iso(billingCycle(d('2000-01-29T00:00:00Z'), d('2000-02-15T00:00:00Z')))[1]).toBe('2000-02-29T00:00:00.000Z');
    expect(iso(billingCycle(d('2100-01-29T00:00:00Z'), d('2100-02-15T00:00:00Z')))[1]).toBe('2100-02-28T00:00:00.000Z');
  });

  it('goes back to the 31st after a short month, over a whole year', () => {
    const anchor = d('2027-12-31T00:00:00Z');
    const starts: string[] = [];
    let at = anchor;
    for (let i = 0; i < 13; i++) {
      const cycle = billingCycle(anchor, at);
      starts.push(cycle.start.toISOString().slice(0, 10));
      at = cycle.end;
    }
    expect(starts).toEqual([
      '2027-12-31',
      '2028-01-31',
      '2028-02-29',
      '2028-03-31',
      '2028-04-30',
      '2028-05-31',
      '2028-06-30',
      '2028-07-31',
      '2028-08-31',
      '2028-09-30',
      '2028-10-31',
      '2028-11-30',
      '2028-12-31',
    ]);
  });

  it('keeps a non-midnight anchor time, also on clamped days', () => {
    const anchor = d('2026-01-31T13:45:30.250Z');
    expect(iso(billingCycle(anchor, d('2026-02-28T13:45:30.249Z')))).toEqual(['2026-01-31T13:45:30.250Z', '2026-02-28T13:45:30.250Z']);
    expect(iso(billingCycle(anchor, d('2026-02-28T13:45:30.250Z')))).toEqual(['2026-02-28T13:45:30.250Z', '2026-03-31T13:45:30.250Z']);
    // Earlier in the boundary day than the anchor time still belongs to the previous cycle.
    expect(iso(billingCycle(d('2026-05-10T23:00:00Z'), d('2026-06-10T22:59:59.999Z')))[0]).toBe('2026-05-10T23:00:00.000Z');
    expect(iso(billingCycle(d('2026-05-10T23:00:00Z'), d('2026-06-10T23:00:00Z')))[0]).toBe('2026-06-10T23:00:00.000Z');
  });

  it('crosses the year in both directions, and extends before the anchor', () => {
    const anchor = d('2026-06-20T08:00:00Z');
    expect(iso(billingCycle(anchor, d('2027-01-05T00:00:00Z')))).toEqual(['2026-12-20T08:00:00.000Z', '2027-01-20T08:00:00.000Z']);
    expect(iso(billingCycle(anchor, d('2026-01-25T00:00:00Z')))).toEqual(['2026-01-20T08:00:00.000Z', '2026-02-20T08:00:00.000Z']);
  });

  it('is the calendar month when anchored on the 1st at 00:00', () => {
    fc.assert(
      fc.property(fc.date({ min: d('1970-01-01T00:00:00Z'), max: d('2200-12-31T00:00:00Z'), noInvalidDate: true }), (at) => {
        expect(billingCycle(d('2020-05-01T00:00:00Z'), at)).toEqual(calendarMonth(at));
      }),
    );
  });

  it('always contains the instant, tiles time without gaps, and starts on the clamped anchor day at the anchor time', () => {
    const date = fc.date({ min: d('1970-01-01T00:00:00Z'), max: d('2200-12-31T00:00:00Z'), noInvalidDate: true });
    fc.assert(
      fc.property(date, date, (anchor, at) => {
        const cycle = billingCycle(anchor, at);
        expect(periodContains(cycle, at)).toBe(true);
        expect(billingCycle(anchor, cycle.end).start).toEqual(cycle.end);
        expect(billingCycle(anchor, new Date(cycle.start.getTime() - 1)).end).toEqual(cycle.start);
        const s = cycle.start;
        expect(s.getUTCDate()).toBe(Math.min(anchor.getUTCDate(), daysInMonth(s.getUTCFullYear(), s.getUTCMonth())));
        const timeOfDay = (t: Date) => ((t.getTime() % 86_400_000) + 86_400_000) % 86_400_000;
        expect(timeOfDay(s)).toBe(timeOfDay(anchor));
        const days = (cycle.end.getTime() - s.getTime()) / 86_400_000;
        expect(days >= 28 && days <= 31).toBe(true);
      }),
    );
  });
});

describe('periodFor and nextReset', () => {
  it('choose the period by kind', () => {
    const at = d('2026-12-02T09:00:00Z');
    const anchor = d('2026-11-20T10:00:00Z');
    expect(periodFor('calendar_month', at, anchor)).toEqual(calendarMonth(at));
    expect(periodFor('billing_cycle', at, anchor)).toEqual(billingCycle(anchor, at));
    expect(nextReset('calendar_month', at).toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(nextReset('billing_cycle', at, anchor).toISOString()).toBe('2026-12-20T10:00:00.000Z');
  });

  it('falls back to the calendar month for a billing cycle without an anchor', () => {
    const at = d('2026-12-02T09:00:00Z');
    expect(periodFor('billing_cycle', at, null)).toEqual(calendarMonth(at));
    expect(nextReset('billing_cycle', at).toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });

  it('resets at the boundary instant itself: nextReset of the boundary is the following boundary', () => {
    expect(nextReset('calendar_month', d('2027-01-01T00:00:00Z')).toISOString()).toBe('2027-02-01T00:00:00.000Z');
  });
});

describe('edges the plans issue names', () => {
  it('anchors on Feb 29 of a leap year: Feb 28 in the next years, back to the 29th in March', () => {
    const anchor = d('2028-02-29T00:00:00Z');
    expect(iso(billingCycle(anchor, d('2029-02-28T00:00:00Z')))).toEqual(['2029-02-28T00:00:00.000Z', '2029-03-29T00:00:00.000Z']);
    expect(iso(billingCycle(anchor, d('2029-02-27T23:59:59.999Z')))).toEqual(['2029-01-29T00:00:00.000Z', '2029-02-28T00:00:00.000Z']);
    expect(iso(billingCycle(anchor, d('2032-02-29T00:00:00Z')))[0]).toBe('2032-02-29T00:00:00.000Z');
  });

  it('resets a billing cycle anchored on the 31st at the exact boundary instant, never a millisecond early', () => {
    const anchor = d('2026-10-31T12:00:00Z');
    expect(nextReset('billing_cycle', d('2026-11-30T11:59:59.999Z'), anchor).toISOString()).toBe('2026-11-30T12:00:00.000Z');
    expect(nextReset('billing_cycle', d('2026-11-30T12:00:00.000Z'), anchor).toISOString()).toBe('2026-12-31T12:00:00.000Z');
    expect(nextReset('billing_cycle', d('2027-01-31T12:00:00.000Z'), anchor).toISOString()).toBe('2027-02-28T12:00:00.000Z');
  });

  it('ends February on the 29th in leap years for calendar months (the Free reset instant)', () => {
    expect(nextReset('calendar_month', d('2028-02-29T23:59:59.999Z')).toISOString()).toBe('2028-03-01T00:00:00.000Z');
    expect(nextReset('calendar_month', d('2027-02-28T23:59:59.999Z')).toISOString()).toBe('2027-03-01T00:00:00.000Z');
    expect(iso(calendarMonth(d('2100-02-28T12:00:00Z')))).toEqual(['2100-02-01T00:00:00.000Z', '2100-03-01T00:00:00.000Z']);
  });
});
