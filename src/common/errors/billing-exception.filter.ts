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
    } else if (databaseUnavailable(error)) {
      this.logger.warn(`database unavailable: ${String(error)}`);
    }
    // A refusal that says when to try again says it in the header too (RFC 9110 §10.2.3), for clients and proxies that read only that.
    const retryAfter = exception.details.retryAfterSeconds;
    if (typeof retryAfter === 'number') void reply.header('retry-after', String(retryAfter));
    this.send(reply, exception);
  }

  /** The answer's body: the contract's JSON error. A surface with pages of its own (the admin console) answers a page instead. */
  protected send(reply: FastifyReply, exception: BillingException): void {
    void reply.status(exception.status).send(exception.toBody());
  }
}

export function toBillingException(error: unknown): BillingException {
  if (error instanceof BillingException) return error;
  if (databaseUnavailable(error)) {
    return new BillingException('DL_BILLING_UNAVAILABLE', 'The database is unavailable: try again shortly', [], { retryAfterSeconds: 1 });
  }
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

/** PostgreSQL error codes of a connection lost or refused: connection exceptions (class 08), shutdowns, too many connections. */
const UNAVAILABLE_CODES = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53300',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);
/**
 * What pg says when a connection is lost, cannot be had in time (DATABASE_ACQUIRE_TIMEOUT_MS), a
 * query is not answered in time (DATABASE_QUERY_TIMEOUT_MS), or the database takes none.
 */
const UNAVAILABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|is not currently accepting connections|Client has encountered a connection error/;

/**
 * Whether a request failed because the database could not be reached (refused, lost, shut down,
 * full): a 503 the caller may retry (every write is idempotent by its key), not a 500.
 */
export function databaseUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; driverError?: { code?: unknown }; message?: unknown } | null;
  if (typeof e !== 'object' || e === null) return false;
  const code = e.code ?? e.driverError?.code;
  if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_CODES.has(code))) return true;
  return typeof e.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message);
}
