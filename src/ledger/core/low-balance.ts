/**
 * A wallet's low-balance line: the threshold of the last `wallet.low_balance` its account was sent
 * (null: none since the available balance was last at or above it) and how many times the balance came
 * back to it. Admission sets it with a notice (`lowBalanceMarkCall`); every ledger write re-arms it
 * by `lineAfterWrite`.
 */
export interface LowBalanceLine {
  line: bigint | null;
  rises: bigint;
}

/**
 * The re-arm rule, defined once: a write that leaves the available balance at or above the line
 * clears it, and the balance's returns to the line count one more. Run in memory on each write of a
 * batch (WalletBatch.apply); `lineAfterWriteSql` is the same rule for the write statements. Within one
 * statement a line is only cleared, never set, so running it on each write in turn is running it once
 * on the highest available balance the writes leave (what batch-write.ts sends as `peak`).
 */
export function lineAfterWrite(mark: LowBalanceLine, available: bigint): LowBalanceLine {
  return mark.line !== null && available >= mark.line ? { line: null, rises: mark.rises + 1n } : { ...mark };
}

/**
 * lineAfterWrite in SQL, over SQL expressions of the wallet's line and rises and the available balance
 * the write leaves: the new line and rises, for the SET of a wallets UPDATE (the ledger's write and
 * the monthly reset's bulk grant). A NULL line stays NULL, its rises unchanged.
 */
export function lineAfterWriteSql(p: { line: string; rises: string; available: string }): { line: string; rises: string } {
  const back = `${p.line} <= (${p.available})`;
  return { line: `CASE WHEN ${back} THEN NULL ELSE ${p.line} END`, rises: `${p.rises} + CASE WHEN ${back} THEN 1 ELSE 0 END` };
}
