import { randomUUID } from 'node:crypto';
import { maxHeaderSize, STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { INestApplication, ModuleMetadata } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Test } from '@nestjs/testing';
import { AppModule } from './app.module';
import { isConsolePath, sendConsoleError } from './admin/console-error.filter';
import type { AppConfig } from './common/config/config';
import type { ConfigFiles } from './config-files';
import { withCorrelation } from './common/context/correlation';
import { BillingException } from './common/errors/billing.exception';
import { toBillingException } from './common/errors/billing-exception.filter';
import { createLogger, PinoLogger } from './common/logging/logger';
import { registerJsonBodyParser } from './common/http/json-body';
import { registerOpenApi } from './api-docs/docs';
import { registerRequestChecks } from './common/http/request-checks';
import { errorCodeOf, noteErrorCode, principalOf } from './common/http/request-notes';
import { Metrics } from './health/metrics';

const BODY_LIMIT = 5 * 1024 * 1024;

/** A caller's `x-request-id` is kept when it looks like an id; it goes into audit rows and logs. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's request id if it is acceptable, else a generated one (never an error: it is only a label). */
export function requestIdOf(header: string | string[] | undefined): string {
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : randomUUID();
}

const MAX_PARAM_LENGTH = 384;

/**
 * What Node's HTTP parser refuses before Fastify has a request (malformed HTTP, a request line and
 * headers over `maxHeaderSize`, headers too slow to arrive) is answered with the contract's error
 * body too, then the connection is closed (the parser cannot go on after an error).
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const exception =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new BillingException('DL_BILLING_HEADERS_TOO_LARGE', 'The request line and headers are too large', [
          { field: 'headers', message: `must be at most ${maxHeaderSize} bytes with the request line` },
        ])
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new BillingException('DL_BILLING_REQUEST_TIMEOUT', 'The request did not arrive in time')
        : BillingException.invalid(
            [{ field: 'request', message: 'is not a well-formed HTTP/1.1 request' }],
            'The request is not valid HTTP',
          );
  const body = JSON.stringify(exception.toBody());
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  // A lingering close: the answer, then our side of the connection closed, while what the client is
  // still sending (the rest of a 100 KB URL) is read and dropped. Closing at once with unread input
  // resets the connection, and the client may lose the answer. At most LINGER_MS, then destroyed.
  socket.end(
    `HTTP/1.1 ${exception.status} ${STATUS_CODES[exception.status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
  socket.on('data', () => undefined);
  socket.resume();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

/** How long a refused connection may go on sending before it is destroyed. */
const LINGER_MS = 2_000;

/** What follows every answer (the access line and the HTTP metrics): set by `configure`, once the app exists. */
interface Answered {
  observe: (request: FastifyRequest, reply: FastifyReply) => void;
}

function fastifyAdapter(answered: Answered): FastifyAdapter {
  return new FastifyAdapter({
    bodyLimit: BODY_LIMIT,
    // Path ids are up to 128 characters, each up to 3 when percent-encoded (`:` as `%3A`); a longer
    // segment is refused below before any route runs (Fastify's default, 100, refused valid ids).
    // A router option: set at the top level, Fastify 5 prints a deprecation warning (FSTDEP022), a
    // line of plain text on stderr, at every start.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Read by genReqId, which refuses what is not a plain id (control characters, 10 KB, log injection).
    requestIdHeader: false,
    genReqId: (request: IncomingMessage) => requestIdOf(request.headers['x-request-id']),
    // Requests are logged by the hook below, without headers (API keys never reach the log).
    logger: false,
    clientErrorHandler: answerClientError,
    // Errors Fastify answers before any route runs (a URL it cannot decode, a malformed
    // content type) get the contract's error body too; under /admin, the console's error page.
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const exception =
        error.code === 'FST_ERR_BAD_URL'
          ? BillingException.invalid([{ field: 'url', message: 'is not a valid URL (malformed percent-encoding)' }])
          : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
            ? BillingException.invalid([{ field: 'url', message: `has a path segment longer than ${MAX_PARAM_LENGTH} characters` }])
            : toBillingException(error);
      // Answered before any route, so without the hooks: the request id, the access line and the
      // metrics are added here.
      void reply.header('x-request-id', request.id);
      reply.raw.once('finish', () => withCorrelation({ id: request.id, kind: 'request' }, () => answered.observe(request, reply)));
      // (The console's error page notes its code itself.)
      if (isConsolePath(request.url)) return sendConsoleError(reply, exception);
      noteErrorCode(request, exception.code);
      void reply.status(exception.status).send(exception.toBody());
    },
  });
}

/** Hooks shared by production and tests: request ids, access log, HTTP metrics, 405 and 415. */
function configure(app: NestFastifyApplication, logger: PinoLogger, answered: Answered): void {
  const fastify = app.getHttpAdapter().getInstance();
  const metrics = app.get(Metrics);
  // Everything a request does runs with its request id as the correlation (audit rows, logs).
  fastify.addHook('onRequest', (request, _reply, done) => {
    withCorrelation({ id: request.id, kind: 'request' }, done);
  });
  // Every error body is the contract's {"error":{"code":…}}: its code labels the metrics and the access log.
  // Once the server is closing, the answers to the requests still in flight close their
  // connections: a keep-alive client would otherwise hold the server open until its idle timeout.
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  fastify.addHook('onSend', async (request, reply, payload) => {
    void reply.header('x-request-id', request.id);
    if (closing) void reply.header('connection', 'close');
    if (reply.statusCode >= 400 && typeof payload === 'string') {
      const code = /^\{"error":\{"code":"(DL_BILLING_[A-Z_]+)"/.exec(payload)?.[1];
      if (code) noteErrorCode(request, code);
    }
  });
  answered.observe = (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const code = errorCodeOf(request) ?? '';
    metrics.observeHttp(request.method, route, reply.statusCode, code, reply.elapsedTime / 1000);
    // The access line: one per request, with the key's id (never the key) and the error code.
    const keyId = principalOf(request)?.keyId;
    const level = reply.statusCode >= 500 ? 'error' : 'info';
    logger.pino[level](
      {
        context: 'Http',
        method: request.method,
        route,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
        keyId,
        code: code || undefined,
      },
      'request',
    );
  };
  fastify.addHook('onResponse', async (request, reply) => answered.observe(request, reply));
  registerRequestChecks(fastify);
  registerJsonBodyParser(app, BODY_LIMIT);
  registerOpenApi(app);
}

/** Builds the production application (not yet listening), with the configuration files main.ts read. */
export async function createApp(config: AppConfig, files: ConfigFiles): Promise<NestFastifyApplication> {
  const logger = new PinoLogger(createLogger(config.logLevel), true);
  const answered: Answered = { observe: () => undefined };
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config, files), fastifyAdapter(answered), {
    rawBody: true,
    logger,
    bufferLogs: false,
    // A failure to start (the database unreachable after its retries) reaches main's `startup failed`
    // line instead of Nest ending the process itself.
    abortOnError: false,
  });
  configure(app, logger, answered);
  return app;
}

/** Builds the application for tests, with providers overridden (e.g. the clock). */
export async function createTestApp(
  config: AppConfig,
  overrides: { provide: unknown; useValue: unknown }[] = [],
  extra: ModuleMetadata['imports'] = [],
): Promise<NestFastifyApplication> {
  const logger = new PinoLogger(createLogger(config.logLevel));
  let builder = Test.createTestingModule({ imports: [AppModule.forRoot(config), ...extra] }).setLogger(logger);
  for (const o of overrides) builder = builder.overrideProvider(o.provide).useValue(o.useValue);
  const moduleRef = await builder.compile();
  const answered: Answered = { observe: () => undefined };
  const app = moduleRef.createNestApplication<NestFastifyApplication>(fastifyAdapter(answered), { rawBody: true });
  configure(app, logger, answered);
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}

export type { INestApplication };
