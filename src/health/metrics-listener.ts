import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { BillingException } from 'src/common/errors/billing.exception';
import { Metrics } from './metrics';

/** Whether a scrape may read the metrics: always without METRICS_BEARER_TOKEN, else with that bearer. */
export function metricsAuthorized(token: string | undefined, authorization: string | undefined): boolean {
  if (token === undefined) return true;
  const given = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1] ?? '';
  // Compared in constant time, over digests so that the length is not told either.
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(token));
}

export const METRICS_UNAUTHENTICATED = () =>
  new BillingException('DL_BILLING_UNAUTHENTICATED', 'The metrics need Authorization: Bearer <METRICS_BEARER_TOKEN>');

/**
 * With METRICS_PORT set, serves `GET /metrics` on a listener of its own, bound to METRICS_HOST
 * (loopback unless told otherwise), so that the metrics can be kept off the network the API is on;
 * the API's port then answers 404 for /metrics. METRICS_BEARER_TOKEN applies here too.
 */
@Injectable()
export class MetricsListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server?: Server;

  constructor(
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const listen = this.config.metricsListener;
    if (!listen) return;
    const server = createServer((request, response) => void this.serve(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(listen.port, listen.host, () => resolve());
    });
    this.server = server;
    this.logger.log(`metrics on http://${listen.host}:${(server.address() as AddressInfo).port}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '').split('?')[0];
    let refusal: BillingException | undefined;
    if (path !== '/metrics') refusal = BillingException.notFound('Route');
    else if (request.method !== 'GET') refusal = new BillingException('DL_BILLING_METHOD_NOT_ALLOWED', 'Only GET /metrics is served here');
    else if (!metricsAuthorized(this.config.metricsBearerToken, request.headers.authorization)) refusal = METRICS_UNAUTHENTICATED();
    if (refusal) {
      response.writeHead(refusal.status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(refusal.toBody()));
      return;
    }
    try {
      const text = await this.metrics.registry.metrics();
      response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(text);
    } catch (error) {
      this.logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
      response
        .writeHead(500, { 'content-type': 'application/json; charset=utf-8' })
        .end(JSON.stringify(new BillingException('DL_BILLING_INTERNAL', 'Internal error').toBody()));
    }
  }
}
