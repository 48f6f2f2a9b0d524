/**
 * Limits on JSON text checked before it is parsed (HTTP bodies, Kafka messages, Stripe webhooks).
 * Everything after the parser may recurse (JSON.stringify, zod, canonical JSON, jsonb), so a body
 * 5,000 levels deep must be refused here, by a loop over the text that never recurses itself.
 */
export const JSON_LIMITS = {
  /** Nesting of arrays and objects: the deepest request the API defines is 4 levels. */
  maxDepth: 32,
  /** Elements and members in all, whatever their nesting (10,000 events of 20 values fit). */
  maxValues: 500_000,
} as const;

/** The finding of a NUL character (PostgreSQL text cannot hold one), wherever text comes from. */
export const NUL = 'must not contain NUL characters';
const LONE_SURROGATE = 'must not contain a lone UTF-16 surrogate (\\uD800-\\uDFFF not in a pair)';
const LOWER_U = 0x75;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/**
 * Why a JSON text is refused, or undefined when it is within the limits. It does not validate the
 * JSON (the parser does that next); it refuses what no parser output should ever hold: too deep,
 * too many values, NUL characters (PostgreSQL text and jsonb cannot store them), an escaped lone
 * surrogate (no UTF-8 text holds one), a key twice in one object (parsers disagree on which one
 * wins), or a `__proto__` key (prototype pollution).
 */
export function jsonLimitProblem(text: string, limits: { maxDepth: number; maxValues: number } = JSON_LIMITS): string | undefined {
  // One entry per open container: the keys seen so far for an object, null for an array.
  const open: (Set<string> | null)[] = [];
  let values = 1;
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = i + 1;
      let escaped = false;
      while (end < text.length) {
        const d = text.charCodeAt(end);
        if (d === BACKSLASH) {
          escaped = true;
          if (text.charCodeAt(end + 1) !== LOWER_U) {
            end += 2;
            continue;
          }
          // \uXXXX: a NUL, or half of a surrogate pair without its other half, which no UTF-8 text
          // can carry (PostgreSQL would store U+FFFD instead: not what was sent).
          const unit = hexUnit(text, end + 2);
          if (unit === 0) return NUL;
          if (unit >= 0xd800 && unit <= 0xdbff) {
            const low = text.charCodeAt(end + 6) === BACKSLASH && text.charCodeAt(end + 7) === LOWER_U ? hexUnit(text, end + 8) : -1;
            if (low < 0xdc00 || low > 0xdfff) return LONE_SURROGATE;
            end += 12;
          } else if (unit >= 0xdc00 && unit <= 0xdfff) {
            return LONE_SURROGATE;
          } else {
            end += 2;
          }
        } else if (d === QUOTE) break;
        else if (d === 0) return NUL;
        else end++;
      }
      const keys = open[open.length - 1];
      if (expectKey && keys) {
        const key = escaped ? decodeKey(text.slice(i, end + 1)) : text.slice(i + 1, end);
        if (key === '__proto__') return 'must not have a __proto__ key';
        if (keys.has(key)) return `must not have the key "${key.slice(0, 64)}" twice in one object`;
        keys.add(key);
        expectKey = false;
      }
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      open.push(c === OPEN_OBJECT ? new Set() : null);
      if (open.length > limits.maxDepth) return `must not be nested more than ${limits.maxDepth} levels deep`;
      expectKey = c === OPEN_OBJECT;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      open.pop();
      expectKey = false;
    } else if (c === COMMA) {
      if (++values > limits.maxValues) return `must not hold more than ${limits.maxValues} values`;
      expectKey = (open[open.length - 1] ?? null) !== null;
    } else if (c === COLON) {
      expectKey = false;
    } else if (c === 0) {
      return NUL;
    }
  }
  return undefined;
}

/** The UTF-16 unit of the 4 hex digits at `at`, or -1 when they are not (the parser refuses those). */
function hexUnit(text: string, at: number): number {
  const hex = text.slice(at, at + 4);
  return /^[0-9a-fA-F]{4}$/.test(hex) ? parseInt(hex, 16) : -1;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The text of JSON bytes and why it is refused (undefined: within the limits). JSON is UTF-8
 * (RFC 8259): bytes that are not would be decoded to U+FFFD, so stored as something else than was
 * sent; they are refused instead.
 */
export function jsonTextOf(bytes: Uint8Array): { text: string; problem: string | undefined } {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return { text: '', problem: 'must be UTF-8 (bytes that are no UTF-8 character were found)' };
  }
  return { text, problem: jsonLimitProblem(text) };
}

/** A key with escapes, as the parser will see it; malformed text is left to the parser to refuse. */
function decodeKey(token: string): string {
  try {
    return JSON.parse(token) as string;
  } catch {
    return token;
  }
}
