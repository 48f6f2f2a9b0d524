/**
 * Which runtimes may still run: the one definition that the concurrency quota counts (a launch's
 * admission and the quotas view), that an account's suspension and a lowered spend limit tell to
 * terminate, and that support sees as live. Here, below the modules that read it (reservations,
 * spend limits, metering), so that each reads it without importing a module above it.
 */

/** The statuses of a runtime that may still run: reserved (not started yet), running, paused, told to terminate. */
export const LIVE_STATUSES = ['reserved', 'running', 'paused', 'terminating'] as const;

/**
 * SQL: whether the `runtimes` row `r` (a table alias, or the table's name; none: the table's own
 * columns, as in its index's predicate) may still run. A live
 * status, or a reservation given back as never started (`voided`, `never_started`, its hold settled
 * at zero) whose late events show a run that has not ended: it has a start, and neither a
 * termination (which settles it), a launch failure (which relabels it) nor a forced settlement
 * (`settled`) has come. Such a runtime keeps its status, and its charge stays the correction of its
 * zero settlement; it only counts, and is told to terminate, as a running one.
 *
 * The index `runtimes_live_account_idx` (the `runtimes` entity) has this predicate, so that an
 * account's live runtimes are found without reading its history (a launch counts them).
 */
export function liveRuntimeSql(r?: string): string {
  const c = (column: string) => (r ? `${r}.${column}` : `"${column}"`);
  return (
    `(${c('status')} IN (${LIVE_STATUSES.map((s) => `'${s}'`).join(', ')})` +
    ` OR (${c('status')} = 'voided' AND ${c('settlement')} = 'never_started' AND ${c('started_at')} IS NOT NULL))`
  );
}
