import type { Finding } from 'src/common/errors/billing.exception';

/**
 * The finding of an empty range, on the parameter the caller sent: `to` when both were sent; the one
 * sent when the other is this month's default (a `from` after this month, a `to` before it).
 */
export function emptyRange(q: { from?: string; to?: string }, month: { start: Date; end: Date }): Finding {
  if (q.from !== undefined && q.to === undefined) {
    return { field: 'from', message: `must be before to (not sent: the end of this month, ${month.end.toISOString()})` };
  }
  if (q.to !== undefined && q.from === undefined) {
    return { field: 'to', message: `must be after from (not sent: the start of this month, ${month.start.toISOString()})` };
  }
  return { field: 'to', message: 'must be after from' };
}
