/**
 * Quota and allowance periods: half-open UTC intervals [start, end). The instant `end` belongs to the
 * next period.
 */

export const PERIOD_KINDS = ['calendar_month', 'billing_cycle'] as const;
export type PeriodKind = (typeof PERIOD_KINDS)[number];

export interface Period {
  /** Inclusive. */
  start: Date;
  /** Exclusive: the next period's start. */
  end: Date;
}

function requireValid(date: Date, name: string): number {
  const t = date.getTime();
  if (Number.isNaN(t)) throw new RangeError(`${name} is not a valid date`);
  return t;
}

/** A UTC instant from parts; unlike Date.UTC, years 0-99 are not moved to 1900-1999. */
function utc(year: number, month: number, day: number, timeOfDayMs = 0): Date {
  const d = new Date(0);
  d.setUTCFullYear(year, month, day);
  return new Date(d.getTime() + timeOfDayMs);
}

/** Days in a month (month 0-11; out-of-range months roll into the neighbouring years). */
export function daysInMonth(year: number, month: number): number {
  return utc(year, month + 1, 0).getUTCDate();
}

/** The calendar month (UTC) containing `at`: [1st 00:00, next 1st 00:00). */
export function calendarMonth(at: Date): Period {
  requireValid(at, 'at');
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  return { start: utc(y, m, 1), end: utc(y, m + 1, 1) };
}

/**
 * The monthly billing cycle containing `at`, anchored on `anchor`'s day of month and time of day
 * (UTC). In a month shorter than the anchor day the boundary is the month's last day, at the anchor's
 * time; the next month goes back to the anchor day (anchor Jan 31 → Feb 28/29 → Mar 31 → Apr 30).
 * Cycles extend both ways from the anchor, so any instant has one.
 */
export function billingCycle(anchor: Date, at: Date): Period {
  requireValid(anchor, 'anchor');
  const t = requireValid(at, 'at');
  const day = anchor.getUTCDate();
  const timeOfDayMs = anchor.getTime() - utc(anchor.getUTCFullYear(), anchor.getUTCMonth(), day).getTime();
  // The boundary in month m always falls inside month m, so boundaries increase month by month.
  const boundary = (year: number, month: number): Date => {
    const first = utc(year, month, 1);
    const y = first.getUTCFullYear();
    const m = first.getUTCMonth();
    return utc(y, m, Math.min(day, daysInMonth(y, m)), timeOfDayMs);
  };
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  const thisMonth = boundary(y, m);
  return thisMonth.getTime() <= t ? { start: thisMonth, end: boundary(y, m + 1) } : { start: boundary(y, m - 1), end: thisMonth };
}

/**
 * The period of a kind containing `at`. A billing cycle without an anchor (no subscription yet)
 * falls back to the calendar month, which is the cycle anchored on the 1st at 00:00.
 */
export function periodFor(kind: PeriodKind, at: Date, anchor?: Date | null): Period {
  switch (kind) {
    case 'calendar_month':
      return calendarMonth(at);
    case 'billing_cycle':
      return anchor ? billingCycle(anchor, at) : calendarMonth(at);
  }
}

/** When the period containing `at` ends and the next begins (the instant quotas and allowances reset). */
export function nextReset(kind: PeriodKind, at: Date, anchor?: Date | null): Date {
  return periodFor(kind, at, anchor).end;
}

export function periodContains(period: Period, at: Date): boolean {
  const t = at.getTime();
  return period.start.getTime() <= t && t < period.end.getTime();
}
