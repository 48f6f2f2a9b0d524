import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };

/** The named schemas of the API (`Schemas['Wallet']`, `Schemas['ErrorBody']`, …). */
export type Schemas = components['schemas'];

export type BillingClient = Client<paths>;

export interface BillingClientOptions {
  /** The service's base URL, e.g. `http://localhost:3000`. */
  baseUrl: string;
  /** An API key, sent as `Authorization: Bearer <key>`. */
  apiKey?: string;
  /** A fetch of your own (tests, proxies); the global fetch by default. */
  fetch?: (request: Request) => Promise<Response>;
}

/**
 * A client of the billing API whose paths, parameters, bodies and responses are typed from the
 * OpenAPI document: `client.POST('/v1/reservations', { body })` answers `{ data, error, response }`.
 */
export function createBillingClient(options: BillingClientOptions): BillingClient {
  return createClient<paths>({
    baseUrl: options.baseUrl,
    headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}
