import { Catch } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { BillingExceptionFilter } from 'src/common/errors/billing-exception.filter';
import type { BillingException } from 'src/common/errors/billing.exception';
import { noteErrorCode } from 'src/common/http/request-notes';
import { errorPage } from './render';

/** What every console answer carries: no framing, no sniffing, no scripts, no referrer. */
export const CONSOLE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/**
 * The console's errors that happen before a page is rendered (a query its pipe refuses, the
 * database down while the session is checked) answer a page, as the console's other errors, not
 * the API's JSON body: same status, code and findings, logged and counted the same way.
 */
@Catch()
export class ConsoleErrorFilter extends BillingExceptionFilter {
  protected override send(reply: FastifyReply, exception: BillingException): void {
    sendConsoleError(reply, exception);
  }
}

/** Whether a request's URL (as sent, query included) is the console's: `/admin`, `/admin/…`, `/admin?…`. */
export function isConsolePath(url: string): boolean {
  return url === '/admin' || url.startsWith('/admin/') || url.startsWith('/admin?');
}

/**
 * The console's error page for an error of the request itself, with its status, code and findings.
 * Also what Fastify's own refusals before any route (a URL it cannot decode) answer under /admin.
 */
export function sendConsoleError(reply: FastifyReply, exception: BillingException): void {
  noteErrorCode(reply.request, exception.code);
  void reply
    .status(exception.status)
    // Set here too: an error Fastify raises before any route is answered without the onSend hooks.
    .headers(CONSOLE_HEADERS)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(errorPage(exception, null, '/admin'));
}
