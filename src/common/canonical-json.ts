import { createHash } from 'node:crypto';

/**
 * RFC 8785 (JCS) canonical JSON for the values this service hashes: objects with keys sorted by
 * UTF-16 code units, no whitespace, numbers in ECMAScript form, bigint written as a decimal number.
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('non-finite number cannot be canonicalized');
      return JSON.stringify(value);
    case 'bigint':
      return value.toString();
    case 'string':
      return JSON.stringify(value);
    case 'object': {
      // Written by concatenation, without the intermediate arrays of entries: every ledger write's
      // fingerprint and every audit row's record goes through here.
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ',';
          // A hole is written as nothing (what mapping and joining the array wrote).
          if (i in value) out += canonicalJson((value[i] as unknown) ?? null);
        }
        return out + ']';
      }
      if (value instanceof Date) return JSON.stringify(value.toISOString());
      const object = value as Record<string, unknown>;
      const keys = sortedKeys(Object.keys(object));
      let out = '{';
      for (const key of keys) {
        const v = object[key];
        if (v === undefined) continue;
        if (out.length > 1) out += ',';
        out += JSON.stringify(key) + ':' + canonicalJson(v);
      }
      return out + '}';
    }
    default:
      throw new TypeError(`cannot canonicalize a ${typeof value}`);
  }
}

/** Objects this small (every record the service hashes) have their keys sorted in place, without the sort's work array. */
const INSERTION_SORT_MAX = 24;

/**
 * `keys` in UTF-16 code unit order, as RFC 8785 orders them (what the default sort and `<` compare).
 * An audit row and a ledger fingerprint are a dozen keys each, hashed on every settlement: sorting
 * them in place spared the work array that Array.prototype.sort allocated, a sixteenth of the
 * settlement path's allocation (docs/benchmarks.md).
 */
function sortedKeys(keys: string[]): string[] {
  if (keys.length > INSERTION_SORT_MAX) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

export function sha256Hex(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/** SHA-256 of the canonical JSON of a request: the fingerprint behind idempotency keys. */
export function fingerprint(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
