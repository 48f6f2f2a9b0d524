/** The names other modules import from here; the wallet's lock and write live in persistence/wallet-store.ts. */
export { LedgerStore, LOCK_STATEMENT, type LockKey, type TransactionWrite } from './persistence/wallet-store';
