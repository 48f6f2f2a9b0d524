import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiKeysService } from 'src/accounts/auth/api-keys.service';
import { BillingException, type Finding } from 'src/common/errors/billing.exception';
import { NUL } from 'src/common/json-limits';
import { toBillingException } from 'src/common/errors/billing-exception.filter';
import { noteErrorCode, notePrincipal } from 'src/common/http/request-notes';
import { Clock } from 'src/infra/clock/clock';
import { csrfToken, csrfValid, parseSession, readCookie, SESSION_COOKIE, sessionValid } from './admin-session';
import { errorPage, type Viewer } from './render';

/** Scopes that may sign in to the console; only `admin` may act. */
export const CONSOLE_SCOPES = ['admin', 'reports'];

/** A signed-in console user: the key, whether it may act, and its session's CSRF token. */
export interface AdminViewer extends Viewer {
  scopes: string[];
}

/**
 * Resolves the session cookie on every request (a revoked key's sessions end at once) and renders
 * pages: HTML with its status, and any error as an HTML page with the error's own status and
 * findings (never a JSON body under an HTML content type).
 */
@Injectable()
export class AdminAuth {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly clock: Clock,
  ) {}

  async viewer(cookies: string | undefined): Promise<AdminViewer | null> {
    const session = parseSession(readCookie(cookies, SESSION_COOKIE));
    if (!session) return null;
    const key = await this.keys.liveKey(session.keyId);
    if (!key || !key.scopes.some((s) => CONSOLE_SCOPES.includes(s))) return null;
    if (!sessionValid(session, key.hash, this.clock.now().getTime(), key.consoleSignedOutAt?.getTime() ?? null)) return null;
    return { keyId: key.id, scopes: key.scopes, canAct: key.scopes.includes('admin'), csrf: csrfToken(key.hash, session.signature) };
  }

  /** Runs a page: signed out → the sign-in page; an error → its HTML page. */
  /** The session's viewer; signed out, the answer is set to the sign-in redirect and this is null. */
  async signedIn(reply: FastifyReply, cookies: string | undefined): Promise<AdminViewer | null> {
    const viewer = await this.viewer(cookies);
    if (!viewer) void reply.code(303).header('location', '/admin/login');
    return viewer;
  }

  async page(reply: FastifyReply, cookies: string | undefined, render: (viewer: AdminViewer) => Promise<string>): Promise<string> {
    const viewer = await this.signedIn(reply, cookies);
    if (!viewer) return '';
    // The access line names the session's key and the error page's code, as for an API request.
    notePrincipal(reply.request, { keyId: viewer.keyId, scopes: viewer.scopes });
    void reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store');
    try {
      return await render(viewer);
    } catch (error) {
      const e = toBillingException(error);
      void reply.code(e.status);
      noteErrorCode(reply.request, e.code);
      return errorPage(e, viewer);
    }
  }

  /**
   * Runs a change: needs a session, the session's CSRF token in the form (403 otherwise: a forged
   * cross-site POST has the cookie at most, never the token) and the admin scope. A form it refuses
   * with a 400 is answered by `correct` when given (the form again, with what was submitted).
   */
  async action(
    reply: FastifyReply,
    cookies: string | undefined,
    body: unknown,
    run: (viewer: AdminViewer, form: Record<string, string>) => Promise<string>,
    correct?: (viewer: AdminViewer, form: Record<string, string>, error: BillingException) => string,
  ): Promise<string> {
    const form = formOf(body);
    return this.page(reply, cookies, async (viewer) => {
      if (!csrfValid(viewer.csrf, form.csrf)) {
        throw new BillingException(
          'DL_BILLING_FORBIDDEN',
          'The form is missing its security token or it is out of date: reload the page and try again',
          [{ field: 'csrf', message: 'missing or not the token of this session' }],
        );
      }
      if (!viewer.canAct) {
        throw new BillingException('DL_BILLING_FORBIDDEN', 'This key has the reports scope: it can read everything but change nothing');
      }
      try {
        // As a JSON body's (json-limits): PostgreSQL text cannot hold a NUL, and a form field is no exception.
        const withNul = Object.keys(form).filter((field) => form[field]!.includes('\u0000'));
        if (withNul.length > 0) throw BillingException.invalid(withNul.map((field) => ({ field, message: NUL })));
        return await run(viewer, form);
      } catch (error) {
        if (!correct || !(error instanceof BillingException) || error.status !== 400) throw error;
        void reply.code(400);
        noteErrorCode(reply.request, error.code);
        return correct(viewer, form, error);
      }
    });
  }
}

/** A urlencoded form as string fields (repeated fields keep the last value). */
export function formOf(body: unknown): Record<string, string> {
  if (typeof body !== 'object' || body === null) return {};
  return Object.fromEntries(
    Object.entries(body as Record<string, unknown>).map(([k, v]) => [k, Array.isArray(v) ? String(v[v.length - 1]) : String(v)]),
  );
}

export type { Finding };
