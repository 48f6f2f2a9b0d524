import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';

type Doc = { paths: Record<string, Record<string, Operation>>; components: Record<string, unknown> };
type Operation = { operationId: string; responses: Record<string, { content?: Record<string, { schema: unknown }> }> };

/** Routes the document leaves out on purpose: the HTML admin pages and the document itself. */
export const UNDOCUMENTED = /^\/(admin(\/|$)|docs(\/|$)|openapi\.json$|asyncapi\.json$)/;

export interface Checked {
  operationId?: string;
}

/**
 * Holds every response a test receives to the OpenAPI document: the operation must document the
 * status, and a JSON body must match that status' schema (objects allow no other fields). A path
 * of the API that matches no operation must answer the error body (404, or 405 for another method).
 */
export class ResponseChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly routes: { pattern: RegExp; path: string; literal: number }[];

  constructor(private readonly doc: Doc) {
    addFormats(this.ajv);
    // The document's own refs (#/components/...) resolve against it, added under the id `doc`.
    this.ajv.addSchema(rebase({ $id: 'doc', components: doc.components }) as Record<string, unknown>);
    this.routes = Object.keys(doc.paths)
      .map((path) => ({
        path,
        pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
        literal: path.replace(/\{[^}]+\}/g, '').length,
      }))
      // A literal segment wins over a parameter, as in the router.
      .sort((a, b) => b.literal - a.literal);
  }

  /** With RECORD_EXAMPLES set: the first real body of each operation and status (and error code), for the document's examples. */
  private readonly recorded = new Map<string, unknown>();

  check(method: string, url: string, status: number, contentType: string | undefined, body: unknown): Checked {
    const checked = this.match(method, url, status, contentType, body);
    // An error is recorded once per code it carries, so the document shows each kind (a 402 for
    // credits and one for a spend limit, with their detail fields).
    const code = status >= 400 ? (body as { error?: { code?: unknown } } | null)?.error?.code : undefined;
    const key = checked.operationId && `${checked.operationId} ${status}${typeof code === 'string' ? ` ${code}` : ''}`;
    if (process.env.RECORD_EXAMPLES && key && typeof body === 'object' && body !== null && !this.recorded.has(key)) {
      this.recorded.set(key, redact(body));
    }
    return checked;
  }

  /** Writes what was recorded to test/.examples/ (`npm run openapi -- --examples` merges it into the document). */
  saveExamples(): void {
    if (!process.env.RECORD_EXAMPLES || this.recorded.size === 0) return;
    mkdirSync('test/.examples', { recursive: true });
    writeFileSync(`test/.examples/${randomUUID()}.json`, JSON.stringify(Object.fromEntries(this.recorded)));
    this.recorded.clear();
  }

  private match(method: string, url: string, status: number, contentType: string | undefined, body: unknown): Checked {
    const path = url.split('?')[0]!;
    if (UNDOCUMENTED.test(path) || method === 'HEAD' || method === 'OPTIONS') return {};
    const route = this.routes.find((r) => r.pattern.test(path));
    const operation = route ? this.doc.paths[route.path]![method.toLowerCase()] : undefined;
    const where = `${method} ${path} → ${status}`;
    if (!operation) {
      if (status !== 404 && status !== 405 && status !== 400) {
        throw new Error(`${where}: no operation of the OpenAPI document matches, yet it answered ${status}`);
      }
      this.validate(where, 'doc#/components/schemas/ErrorBody', { $ref: 'doc#/components/schemas/ErrorBody' }, body);
      return {};
    }
    const response = operation.responses[String(status)];
    if (!response) {
      throw new Error(
        `${where}: status ${status} is not documented for ${operation.operationId} (documented: ${Object.keys(operation.responses).join(', ')})`,
      );
    }
    const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
    if (!response.content) {
      if (body !== '' && body !== undefined) throw new Error(`${where}: ${operation.operationId} documents no body for ${status}`);
      return { operationId: operation.operationId };
    }
    const media = response.content[type];
    if (!media) {
      throw new Error(
        `${where}: ${operation.operationId} documents ${Object.keys(response.content).join(', ')} for ${status}, not ${type || 'no content type'}`,
      );
    }
    if (type === 'application/json') this.validate(where, `${operation.operationId} ${status}`, media.schema, body);
    return { operationId: operation.operationId };
  }

  /** Checks a recorded example (`<operationId> <status>`, and `<code>` for an error) against the document as it is now. */
  checkExample(key: string, body: unknown): void {
    const [operationId, status] = key.split(' ');
    for (const [path, methods] of Object.entries(this.doc.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const schema =
          operation.operationId === operationId ? operation.responses[status!]?.content?.['application/json']?.schema : undefined;
        // Validators are kept by operation and status: the examples of each error code share one.
        if (schema) return this.validate(`example ${key} (${method.toUpperCase()} ${path})`, `${operationId} ${status}`, schema, body);
      }
    }
    throw new Error(`example ${key}: the document has no JSON response ${status} of an operation ${operationId}`);
  }

  private validate(where: string, key: string, schema: unknown, body: unknown): void {
    let validate = this.validators.get(key);
    if (!validate) this.validators.set(key, (validate = this.ajv.compile(rebase(schema) as Record<string, unknown>)));
    if (!validate(body)) {
      const errors = (validate.errors ?? []).map(
        (e) =>
          `${e.instancePath || '/'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`,
      );
      throw new Error(
        `${where}: the body does not match the OpenAPI document: ${errors.join('; ')}\n${JSON.stringify(body).slice(0, 2000)}`,
      );
    }
  }
}

/** API keys in a recorded body are replaced: an example never holds a usable secret. */
function redact(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value), (k, v: unknown) => (k === 'key' && typeof v === 'string' ? 'dlb_secret_shown_once' : v));
}

/** A copy whose `#/components/...` refs point into the document added as `doc`. */
function rebase(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rebase);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `doc${v}` : rebase(v)]),
  );
}

let checkedIn: ResponseChecker | undefined;

/**
 * `fetch` for a test that talks to the service run as a process of its own (test/support/service-process.ts):
 * the response is held to the OpenAPI document as the in-process harness holds its own, here the
 * checked-in docs/openapi.json (a unit test keeps it what the code generates). A failed check throws.
 */
export async function serviceFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(url, init);
  const text = await res.clone().text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON (metrics, CSV, an empty body)
  }
  checkedIn ??= new ResponseChecker(JSON.parse(readFileSync('docs/openapi.json', 'utf8')) as Doc);
  checkedIn.check(
    (init.method ?? 'GET').toUpperCase(),
    new URL(url).pathname,
    res.status,
    res.headers.get('content-type') ?? undefined,
    body,
  );
  return res;
}
