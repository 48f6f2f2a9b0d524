import { Catch } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { BillingExceptionFilter } from 'src/common/errors/billing-exception.filter';
import type { BillingException } from 'src/common/errors/billing.exception';
import { noteErrorCode } from 'src/common/http/request-notes';
import { errorPage } from './render';

/**
 * The console's errors that happen before a page is rendered (a query its pipe refuses, the
 * database down while the session is checked) answer a page, as the console's other errors, not
 * the API's JSON body: same status, code and findings, logged and counted the same way.
 */
@Catch()
export class ConsoleErrorFilter extends BillingExceptionFilter {
  protected override send(reply: FastifyReply, exception: BillingException): void {
    noteErrorCode(reply.request, exception.code);
    void reply
      .status(exception.status)
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(errorPage(exception, null, '/admin'));
  }
}
