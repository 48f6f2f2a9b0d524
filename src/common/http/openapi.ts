import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { RequestMethod } from '@nestjs/common';
import { z } from 'zod';

interface DocEntry {
  target: object;
  handler: object;
  summary: string;
  body?: z.ZodType;
}

const entries: DocEntry[] = [];

/** Describes a route in the OpenAPI document served at /docs; the body schema is the one validated. */
export function Doc(summary: string, body?: z.ZodType): MethodDecorator {
  return (target, _key, descriptor) => {
    entries.push({ target: target.constructor, handler: descriptor.value as object, summary, body });
  };
}

function join(...parts: (string | undefined)[]): string {
  const path = parts
    .filter((p): p is string => !!p && p !== '/')
    .map((p) => p.replace(/^\/+|\/+$/g, ''))
    .join('/');
  return `/${path}`.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

const ERROR_SCHEMA = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', example: 'DL_BILLING_REQUEST_INVALID' },
        message: { type: 'string' },
        findings: {
          type: 'array',
          items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } },
        },
      },
    },
  },
};

/** Serves the OpenAPI 3.1 document at /docs: every route fastify knows, with the details given by @Doc. */
export function registerOpenApi(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  const routes: { method: string; url: string }[] = [];
  fastify.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) if (m !== 'HEAD' && m !== 'OPTIONS') routes.push({ method: m.toLowerCase(), url: route.url });
  });
  const build = (): Record<string, unknown> => {
    const details = new Map<string, DocEntry>();
    for (const e of entries) {
      const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, e.handler) as RequestMethod]?.toLowerCase();
      const path = join(
        Reflect.getMetadata(PATH_METADATA, e.target) as string | undefined,
        Reflect.getMetadata(PATH_METADATA, e.handler) as string | undefined,
      );
      details.set(`${method} ${path}`, e);
    }
    const paths: Record<string, Record<string, unknown>> = {};
    for (const r of routes) {
      const path = join(r.url);
      if (path === '/docs' || path === '/docs/openapi.json') continue;
      const d = details.get(`${r.method} ${path}`);
      const isPublic = path.startsWith('/health') || path === '/metrics' || path === '/v1/stripe/webhooks';
      paths[path] ??= {};
      paths[path][r.method] = {
        summary: d?.summary ?? `${r.method.toUpperCase()} ${path}`,
        ...(isPublic ? { security: [] } : {}),
        ...(d?.body
          ? { requestBody: { required: true, content: { 'application/json': { schema: z.toJSONSchema(d.body, { io: 'input', unrepresentable: 'any' }) } } } }
          : {}),
        responses: {
          '200': { description: 'OK' },
          default: { description: 'Error', content: { 'application/json': { schema: ERROR_SCHEMA } } },
        },
      };
    }
    return {
      openapi: '3.1.0',
      info: { title: 'Datalayer billing service', version: '1' },
      components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer' } } },
      security: [{ apiKey: [] }],
      paths,
    };
  };
  fastify.get('/docs', async () => build());
  fastify.get('/docs/openapi.json', async () => build());
}
