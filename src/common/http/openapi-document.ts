import { OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { z } from 'zod';
import { ACCESS_KEY, PUBLIC_KEY } from 'src/common/auth/auth.decorators';
import type { Requirement } from 'src/common/auth/scopes';
import { ERROR_STATUS, type ErrorCode } from '../errors/error-codes';
import { errorBodySchema } from './api-schemas';
import { docEntries, type DocEntry } from './openapi';

/** The operations' tags: one per module, in the order a reader meets them. */
export const TAGS = [
  { name: 'Accounts', description: 'Accounts (user or organization) and their plan.' },
  { name: 'Members', description: 'Seats: the active members of an organization (also accepted on `accounts.membership.v1`).' },
  { name: 'Reservations', description: 'Launch authorization: a time reservation deducted up front, extended, settled or voided.' },
  { name: 'Events', description: 'Runtime lifecycle and ancillary usage events over HTTP, for deployments without Kafka.' },
  { name: 'Wallet', description: 'Balances, grants in burn order, the ledger and billable usage.' },
  { name: 'Grants', description: 'Credits granted by an operator.' },
  { name: 'Spend limits', description: 'Spend limits, alert thresholds and account suspension.' },
  { name: 'Plans', description: 'Plans, Enterprise overrides and the current period.' },
  { name: 'Stripe', description: 'Top-ups, Team subscriptions, seat reconciliation and the Stripe webhook.' },
  { name: 'Reports', description: 'Operator reports, in JSON or CSV.' },
  { name: 'Audit', description: 'The append-only, hash-chained audit log.' },
  { name: 'API keys', description: 'API keys and their scopes.' },
  { name: 'Jobs', description: 'Scheduled jobs, run on demand under the same advisory lock.' },
  { name: 'Health', description: 'Liveness, readiness and Prometheus metrics (no API key).' },
];

/** Ids in paths, as the global input pipe checks them. */
const PATH_ID = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/);

interface Route {
  method: 'get' | 'post' | 'put' | 'delete' | 'patch';
  path: string;
}

/** The method and OpenAPI path (`/v1/accounts/{id}`) Nest routes the handler at. */
export function routeOf(e: Pick<DocEntry, 'target' | 'handler'>): Route {
  const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, e.handler) as RequestMethod].toLowerCase() as Route['method'];
  const parts = [
    Reflect.getMetadata(PATH_METADATA, e.target) as string | undefined,
    Reflect.getMetadata(PATH_METADATA, e.handler) as string | undefined,
  ];
  const path = parts
    .filter((p): p is string => !!p && p !== '/')
    .map((p) => p.replace(/^\/+|\/+$/g, ''))
    .join('/');
  return { method, path: `/${path}`.replace(/:([A-Za-z0-9_]+)/g, '{$1}') };
}

function accessOf(e: DocEntry): { public: boolean; scopes: string[] } {
  const meta = <T>(key: string): T | undefined =>
    (Reflect.getMetadata(key, e.handler) as T | undefined) ?? (Reflect.getMetadata(key, e.target) as T | undefined);
  if (meta<boolean>(PUBLIC_KEY)) return { public: true, scopes: [] };
  const requirements = meta<Requirement[]>(ACCESS_KEY) ?? [];
  const scopes = requirements.map((r) => (r === 'authenticated' ? 'any' : typeof r === 'string' ? r : `account:{${r.accountParam}}`));
  return { public: false, scopes: ['admin', ...scopes.filter((s) => s !== 'admin')] };
}

function scopesText(scopes: string[]): string {
  if (scopes.includes('any')) return 'Any valid API key (what it may see is checked per object).';
  const named = scopes.map((s) => (s.startsWith('account:') ? `\`${s}\` (the account in the path)` : `\`${s}\``));
  return `API key scopes: ${named.join(' or ')}.`;
}

/** Sent with a 429 or a 503 that says when to try again, equal to the body's `retryAfterSeconds`. */
const RETRY_AFTER = {
  'Retry-After': {
    description: "Seconds to wait before trying again, when the refusal says (the body's `retryAfterSeconds`)",
    required: false,
    schema: { type: 'integer' as const, minimum: 0 },
  },
};

/** Error codes by status, for the codes the route may answer, each with the error bodies recorded for it. */
function errorResponses(codes: ErrorCode[], recorded: (status: number, code: ErrorCode) => unknown): Record<number, ResponseConfig> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  const out: Record<number, ResponseConfig> = {};
  for (const [status, list] of byStatus) {
    const examples = Object.fromEntries(
      list.flatMap((code) => {
        const value = recorded(status, code);
        return value === undefined ? [] : [[code, { summary: `${code}, recorded from a test run`, value }]];
      }),
    );
    out[status] = {
      description: list.join(', '),
      ...(status === 429 || status === 503 ? { headers: RETRY_AFTER } : {}),
      content: {
        'application/json': {
          // A 500 may carry any code's body shape; it also puts ErrorBody (named by its meta id) in the components.
          schema:
            status === 500
              ? errorBodySchema
              : {
                  allOf: [
                    { $ref: '#/components/schemas/ErrorBody' },
                    // Narrows the code only: ErrorBody closes the object, so this part leaves the other fields to it.
                    {
                      type: 'object',
                      properties: {
                        error: { type: 'object', properties: { code: { type: 'string', enum: list } }, unevaluatedProperties: true },
                      },
                    },
                  ],
                },
          ...(Object.keys(examples).length > 0 ? { examples } : {}),
        },
      },
    };
  }
  return out;
}

function commonErrors(e: DocEntry, route: Route, isPublic: boolean): ErrorCode[] {
  // Any route answers 400 to a URL it cannot decode (malformed percent-encoding).
  const codes: ErrorCode[] = ['DL_BILLING_INTERNAL', 'DL_BILLING_REQUEST_INVALID'];
  // A route behind a key reads the database (the key at least): unreachable, it answers 503.
  if (!isPublic) codes.push('DL_BILLING_UNAUTHENTICATED', 'DL_BILLING_FORBIDDEN', 'DL_BILLING_RATE_LIMITED', 'DL_BILLING_UNAVAILABLE');
  if (e.spec.body || route.method === 'post' || route.method === 'put') {
    codes.push('DL_BILLING_PAYLOAD_TOO_LARGE', 'DL_BILLING_UNSUPPORTED_MEDIA_TYPE');
  }
  return codes;
}

export type Examples = Record<string, unknown>;

/** The key of a recorded example: operation id and status, and the code of an error body. */
export function exampleKey(operationId: string, status: number, code?: ErrorCode): string {
  return `${operationId} ${status}${code ? ` ${code}` : ''}`;
}

/**
 * The OpenAPI 3.1 document of every @Doc route of the controllers loaded (load AppModule first),
 * with `examples` (recorded from the tests' real responses) shown beside the schemas.
 */
export function buildOpenApiDocument(examples: Examples = {}): ReturnType<OpenApiGeneratorV31['generateDocument']> {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description:
      'An API key: `Authorization: Bearer <key>`. Its scopes (`control-plane`, `admin`, `reports`, `account:<id>`) are listed on each operation; `admin` may call everything.',
  });
  const entries = [...docEntries()].sort((a, b) => {
    const ra = routeOf(a);
    const rb = routeOf(b);
    return ra.path.localeCompare(rb.path) || ra.method.localeCompare(rb.method);
  });
  for (const e of entries) {
    const route = routeOf(e);
    const access = accessOf(e);
    const names = [...route.path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]!);
    const params = names.length > 0 ? z.object(Object.fromEntries(names.map((n) => [n, e.spec.params?.[n] ?? PATH_ID]))) : undefined;
    const responses: Record<number, ResponseConfig> = errorResponses(
      [...commonErrors(e, route, access.public), ...(e.spec.errors ?? [])],
      (status, code) => examples[exampleKey(e.spec.id, status, code)],
    );
    for (const [status, r] of Object.entries(e.spec.responses)) {
      const example = examples[exampleKey(e.spec.id, Number(status))];
      const content: NonNullable<ResponseConfig['content']> = {};
      if (r.schema) {
        content['application/json'] = {
          schema: r.schema,
          ...(example === undefined ? {} : { examples: { recorded: { summary: 'Recorded from a test run', value: example } } }),
        };
      }
      if (r.csv) content['text/csv'] = { schema: { type: 'string' } };
      if (r.text) content[r.text] = { schema: { type: 'string' } };
      responses[Number(status)] = { description: r.description, ...(Object.keys(content).length > 0 ? { content } : {}) };
    }
    registry.registerPath({
      method: route.method,
      path: route.path,
      operationId: e.spec.id,
      summary: e.spec.summary,
      description: [e.spec.description, access.public ? 'No API key needed.' : scopesText(access.scopes)].filter(Boolean).join('\n\n'),
      tags: [e.spec.tag],
      security: access.public ? [] : [{ bearer: access.scopes.includes('any') ? [] : access.scopes }],
      request: {
        ...(params ? { params } : {}),
        ...(e.spec.query ? { query: e.spec.query } : {}),
        ...(e.spec.headers ? { headers: e.spec.headers } : {}),
        ...(e.spec.body ? { body: { required: true, content: { 'application/json': { schema: e.spec.body } } } } : {}),
      },
      responses,
    });
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Datalayer billing service',
      version: '1.0.0',
      description:
        'Metering, wallet credits and spend limits. Amounts of credits are decimal strings with 6 decimals; times are UTC ISO 8601. ' +
        'Every error body is `{"error": {"code", "message", "findings"}}`.',
      license: { name: 'Proprietary', url: 'https://datalayer.io' },
    },
    servers: [{ url: '/', description: 'The service that serves this document' }],
    tags: TAGS,
    security: [{ bearer: [] }],
  });
}
