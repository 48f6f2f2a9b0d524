import { createHmac, timingSafeEqual } from 'node:crypto';

export const SESSION_COOKIE = 'dl_admin_session';
export const SESSION_TTL_MS = 8 * 3_600_000;

/**
 * An admin session is `<keyId>.<expiresAtMs>.<signature>`: HMAC-SHA256 keyed with the API key's
 * stored hash, so no secret needs configuring, every instance can check it, and revoking the key
 * ends its sessions at once (the hash is looked up again on every request). The key itself is never
 * stored in the cookie.
 */
export function signSession(keyId: string, keyHash: string, expiresAt: number): string {
  return `${keyId}.${expiresAt}.${mac(keyHash, keyId, expiresAt)}`;
}

export function parseSession(value: string | undefined): { keyId: string; expiresAt: number; signature: string } | null {
  const match = value ? /^(key_[A-Za-z0-9_]+)\.(\d{1,16})\.([A-Za-z0-9_-]{43})$/.exec(value) : null;
  if (!match) return null;
  return { keyId: match[1]!, expiresAt: Number(match[2]), signature: match[3]! };
}

/**
 * Whether a session is the key's, unexpired, and signed in after the key's last sign-out (a session
 * is signed in at its expiry less SESSION_TTL_MS).
 */
export function sessionValid(
  session: { keyId: string; expiresAt: number; signature: string },
  keyHash: string,
  now: number,
  signedOutAt: number | null = null,
): boolean {
  if (session.expiresAt <= now) return false;
  if (signedOutAt !== null && session.expiresAt - SESSION_TTL_MS <= signedOutAt) return false;
  const expected = Buffer.from(mac(keyHash, session.keyId, session.expiresAt));
  const given = Buffer.from(session.signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

function mac(keyHash: string, keyId: string, expiresAt: number): string {
  return createHmac('sha256', `dl-admin-session:${keyHash}`).update(`${keyId}.${expiresAt}`).digest('base64url');
}

/** The value of one cookie from a Cookie header. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

/**
 * The CSRF token of a session (synchronizer token): derived from the session's own signature with
 * the key's hash, so it is tied to that session, changes with every sign-in, needs no storage, and
 * a page of another site can neither read nor compute it. Every form that changes something carries
 * it; the cookie is also SameSite=Strict.
 */
export function csrfToken(keyHash: string, sessionSignature: string): string {
  return createHmac('sha256', `dl-admin-csrf:${keyHash}`).update(sessionSignature).digest('base64url');
}

/**
 * The signature of an action's outcome shown on the page it returns to (`?done=…&sig=…`), keyed by
 * the session's CSRF token and covering that page's path: a link made elsewhere cannot make the
 * console say that something happened, nor move an outcome to another account's page.
 */
export function flashSignature(csrf: string, path: string, message: string): string {
  return createHmac('sha256', `dl-admin-flash:${csrf}`).update(`${path}\n${message}`).digest('base64url');
}

/** The outcome to show on the page at `path`: `done` when this session signed it for that page, otherwise nothing. */
export function signedFlash(csrf: string, path: string, done: string | undefined, sig: string | undefined): string | undefined {
  return done !== undefined && csrfValid(flashSignature(csrf, path, done), sig) ? done : undefined;
}

export function csrfValid(expected: string, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
