/**
 * Which runtimes may still run: the one definition that the concurrency quota counts (a launch's
 * admission and the quotas view), that an account's suspension and a lowered spend limit tell to
 * terminate, and that support sees as live. Here, below the modules that read it (reservations,
 * spend limits, metering), so that each reads it without importing a module above it.
 */

/** The statuses of a runtime that may still run: reserved (not started yet), running, paused, told to terminate. */
export const LIVE_STATUSES = ['reserved', 'running', 'paused', 'terminating'] as const;

/**
 * SQL: whether the `runtimes` row `r` (a table alias, or the table's name) may still run. A live
 * status, or a reservation given back as never started (`voided`, `never_started`, its hold settled
 * at zero) whose late events show a run that has not ended: it has a start, and neither a
 * termination (which settles it), a launch failure (which relabels it) nor a forced settlement
 * (`settled`) has come. Such a runtime keeps its status, and its charge stays the correction of its
 * zero settlement; it only counts, and is told to terminate, as a running one.
 */
export function liveRuntimeSql(r: string): string {
  return (
    `(${r}.status IN (${LIVE_STATUSES.map((s) => `'${s}'`).join(', ')})` +
    ` OR (${r}.status = 'voided' AND ${r}.settlement = 'never_started' AND ${r}.started_at IS NOT NULL))`
  );
}
