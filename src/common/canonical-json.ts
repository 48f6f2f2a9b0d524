import { hash } from 'node:crypto';

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
      // String building without the intermediate arrays of entries: this runs several times per
      // reservation (request fingerprint, hold fingerprint, audit records).
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i] ?? null);
        return `${out}]`;
      }
      if (value instanceof Date) return JSON.stringify(value.toISOString());
      const record = value as Record<string, unknown>;
      // The default sort compares UTF-16 code units, as JCS orders keys.
      const keys = Object.keys(record).sort();
      let out = '{';
      for (const key of keys) {
        const v = record[key];
        if (v === undefined) continue;
        out += `${out.length === 1 ? '' : ','}${JSON.stringify(key)}:${canonicalJson(v)}`;
      }
      return `${out}}`;
    }
    default:
      throw new TypeError(`cannot canonicalize a ${typeof value}`);
  }
}

/** One-shot (no Hash object per call: this runs on every request, for its key and its fingerprints). */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/** SHA-256 of the canonical JSON of a request: the fingerprint behind idempotency keys. */
export function fingerprint(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
