import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { BillingException } from './billing.exception';
import type { ErrorCode } from './error-codes';

const HTTP_TO_CODE: Record<number, ErrorCode> = {
  400: 'DL_BILLING_REQUEST_INVALID',
  401: 'DL_BILLING_UNAUTHENTICATED',
  403: 'DL_BILLING_FORBIDDEN',
  404: 'DL_BILLING_NOT_FOUND',
  405: 'DL_BILLING_METHOD_NOT_ALLOWED',
  413: 'DL_BILLING_PAYLOAD_TOO_LARGE',
  415: 'DL_BILLING_UNSUPPORTED_MEDIA_TYPE',
  429: 'DL_BILLING_RATE_LIMITED',
  503: 'DL_BILLING_UNAVAILABLE',
};

/** Where the errors Fastify raises itself lie: a body it cannot parse, a content type it has no parser for. */
const FINDING_FIELD: Record<number, string> = { 400: 'body', 413: 'body', 415: 'content-type' };

/** Maps every error to the contract's body; anything unexpected becomes a 500 that hides internals. */
@Catch()
export class BillingExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(error: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const exception = toBillingException(error);
    if (exception.code === 'DL_BILLING_INTERNAL') {
      this.logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    }
    void reply.status(exception.status).send(exception.toBody());
  }
}

export function toBillingException(error: unknown): BillingException {
  if (error instanceof BillingException) return error;
  const status = httpStatusOf(error);
  if (status !== undefined) {
    const code = HTTP_TO_CODE[status] ?? (status >= 500 ? 'DL_BILLING_INTERNAL' : 'DL_BILLING_REQUEST_INVALID');
    const message = status >= 500 ? 'Internal error' : messageOf(error, status);
    const field = FINDING_FIELD[status];
    return new BillingException(code, message, field ? [{ field, message }] : []);
  }
  return new BillingException('DL_BILLING_INTERNAL', 'Internal error');
}

/** Nest HttpExceptions and Fastify errors (bad JSON, body too large) both carry a status. */
function httpStatusOf(error: unknown): number | undefined {
  if (error instanceof HttpException) return error.getStatus();
  if (typeof error === 'object' && error !== null && 'statusCode' in error) {
    const status = (error as { statusCode: unknown }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 600) return status;
  }
  return undefined;
}

function messageOf(error: unknown, status: number): string {
  if (status === 404) return 'Route not found';
  if (error instanceof Error && error.message) return error.message;
  return 'Request refused';
}
