import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { buildAsyncApiDocument } from './asyncapi-document';
import { dependencyRequire } from 'src/common/dependency-require';
import { buildOpenApiDocument } from 'src/common/http/openapi-document';
import { RECORDED_EXAMPLES } from 'src/common/http/openapi-examples';

/** The files of Swagger UI the page needs, from the npm package (no CDN). */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'docs.js': 'application/javascript; charset=utf-8',
};

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Datalayer billing API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="docs"></div><script src="/docs/swagger-ui-bundle.js"></script><script src="/docs/docs.js"></script></body></html>
`;

// A file of its own rather than an inline script, so a strict Content-Security-Policy can allow it.
const INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#docs', deepLinking: true, defaultModelsExpandDepth: 0 });\n`;

function asset(name: string): Buffer {
  if (name === 'docs.js') return Buffer.from(INIT);
  const dir = dirname(dependencyRequire().resolve('swagger-ui-dist/package.json'));
  return readFileSync(join(dir, name));
}

const registered = new WeakMap<object, { method: string; url: string }[]>();

/** Every route the router has (method and URL pattern), for the check that the document lists them all. */
export function routesOf(app: NestFastifyApplication): readonly { method: string; url: string }[] {
  return registered.get(app) ?? [];
}

/**
 * Serves the OpenAPI 3.1 document at /openapi.json (and /docs/openapi.json), and at /docs a page a
 * person can read (Swagger UI); the AsyncAPI 3.0 document of the Kafka topics at /asyncapi.json. /docs still answers the document itself to a client that does not
 * ask for HTML, as it did before the page existed.
 */
export function registerOpenApi(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  const routes: { method: string; url: string }[] = [];
  registered.set(app, routes);
  fastify.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url });
  });
  let document: unknown;
  // Built on first use: every controller is loaded by then.
  const json = () => (document ??= buildOpenApiDocument(RECORDED_EXAMPLES));
  const files = new Map<string, Buffer>();
  fastify.get('/openapi.json', async () => json());
  fastify.get('/docs/openapi.json', async () => json());
  let asyncApi: unknown;
  fastify.get('/asyncapi.json', async () => (asyncApi ??= buildAsyncApiDocument()));
  fastify.get('/docs', async (request, reply) => {
    if (!/\btext\/html\b/i.test(request.headers.accept ?? '')) return json();
    return reply.type('text/html; charset=utf-8').send(PAGE);
  });
  for (const [name, type] of Object.entries(ASSETS)) {
    fastify.get(`/docs/${name}`, async (_request, reply) => {
      let body = files.get(name);
      if (!body) files.set(name, (body = asset(name)));
      return reply.type(type).header('cache-control', 'public, max-age=3600').send(body);
    });
  }
}
