/** The names other modules import from here; the group-committed batch lives in persistence/ledger-batch.ts. */
export { batchReadCalls, LedgerBatch } from './persistence/ledger-batch';
