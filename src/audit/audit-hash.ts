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
  return asJson(value);
}

/**
 * What JSON.parse(JSON.stringify(value)) gives (bigint as a decimal string), walked directly for plain
 * data (thousands of audit rows per statement); anything else takes the round trip. `undefined`
 * stands for a value JSON leaves out.
 */
function asJson(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value + 0 : null;
    case 'bigint':
      return value.toString();
    case 'object': {
      if (value === null) return null;
      if (Array.isArray(value)) return value.map((v) => asJson(v) ?? null);
      if (Object.getPrototypeOf(value) !== Object.prototype || 'toJSON' in value) return roundTrip(value);
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        const json = asJson(v);
        if (json !== undefined) out[k] = json;
      }
      return out;
    }
    default:
      return undefined;
  }
}

function roundTrip(value: object): unknown {
  return JSON.parse(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))) as unknown;
}
