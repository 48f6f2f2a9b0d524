import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { BillingException } from '../errors/billing.exception';
import { jsonTextOf } from '../json-limits';

/** The route whose body is read only after its signature is checked on the raw bytes. */
export const SIGNED_BODY_ROUTE = '/v1/stripe/webhooks';

/** Set on a signed route's request whose body was left unparsed because it broke a limit. */
export interface LimitedBodyRequest {
  rawBody?: Buffer;
  bodyLimitProblem?: string;
}

/**
 * The one JSON body parser: the raw bytes are kept (Stripe signatures), then the text is checked
 * to be UTF-8 and within the JSON limits without recursion, then Fastify's own parser (which refuses prototype
 * poisoning) runs. A refusal is a 400 with the finding on `body`. On the signed route the body is
 * neither parsed nor refused here: its signature is checked first, then the route refuses it.
 */
export function registerJsonBodyParser(app: NestFastifyApplication, bodyLimit: number): void {
  const fastify = app.getHttpAdapter().getInstance();
  const parse = fastify.getDefaultJsonParser('error', 'error');
  app.useBodyParser('application/json', { bodyLimit }, (req, body, done) => {
    const request = req as FastifyRequest & LimitedBodyRequest;
    const { text, problem } = jsonTextOf(body);
    if (request.routeOptions.url === SIGNED_BODY_ROUTE) {
      // Read from the raw bytes by the route once they are known to come from Stripe.
      request.bodyLimitProblem = problem;
      return done(null, undefined);
    }
    if (problem !== undefined) return done(BillingException.invalid([{ field: 'body', message: problem }], 'The request body is refused'));
    // No body with a JSON content type (clients that always send the header): no body, as without the
    // header; a route that needs one says so in its findings.
    if (text === '') return done(null, undefined);
    void parse(request, text, done);
  });
}
