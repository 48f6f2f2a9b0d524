import { canonicalJson, sha256Hex } from 'src/common/canonical-json';

/** The prev_hash of the first row of every chain. */
export const GENESIS_HASH = '0'.repeat(64);

/** Rows without an account chain here; account ids cannot start with `*`. */
export const GLOBAL_CHAIN = '*';

/** The hashed content of an audit row (everything but its position in the chain). */
export interface AuditRecord {
  chain: string;
  at: string;
  actor: string;
  action: string;
  accountId: string | null;
  before: unknown;
  after: unknown;
  correlationId: string | null;
}

/**
 * hash = SHA-256 of canonicalJson({prevHash, record, seq}) (RFC 8785). The SQL function
 * `audit_hash(prev_hash, seq, record_json)` builds the same text, so a writer can link a row to
 * its chain head in one statement; this function is the reference `audit verify` uses.
 */
export function auditHash(prevHash: string, seq: number, record: AuditRecord): string {
  return sha256Hex(canonicalJson({ prevHash, record, seq }));
}

/** JSON as it will read back from jsonb: bigint as a decimal string, undefined dropped. */
export function normalizeJson(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  return JSON.parse(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))) as unknown;
}
