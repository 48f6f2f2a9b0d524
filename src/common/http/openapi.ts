import type { z } from 'zod';
import type { ErrorCode } from '../errors/error-codes';

/** One response of an operation: a JSON body (zod), CSV or plain text, or no body. */
export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** Also answered as CSV (`?format=csv` or `Accept: text/csv`). */
  csv?: boolean;
  /** A text body (e.g. Prometheus' exposition format) instead of JSON. */
  text?: string;
}

/**
 * What the OpenAPI document says of a route beyond what Nest already knows (method, path, path
 * parameters, the scopes of @Access/@Public): its id, the zod schemas it reads and answers, and
 * the error codes it may answer. The schemas are the ones the route validates with, so the document
 * cannot drift from the code; the tests hold every response to it.
 */
export interface DocSpec {
  id: string;
  summary: string;
  description?: string;
  tag: string;
  body?: z.ZodType;
  query?: z.ZodObject;
  headers?: z.ZodObject;
  /** Path parameters' schemas where they are narrower than an id (letters, digits and `_.:-`). */
  params?: Record<string, z.ZodType>;
  responses: Record<number, ResponseSpec>;
  /** Error codes this route answers besides the common ones (invalid request, authentication, rate limit, internal). */
  errors?: ErrorCode[];
}

export interface DocEntry {
  target: object;
  handler: object;
  spec: DocSpec;
}

const entries: DocEntry[] = [];

/** Documents a route in the OpenAPI document (served at /openapi.json and /docs). */
export function Doc(spec: DocSpec): MethodDecorator {
  return (target, _key, descriptor) => {
    entries.push({ target: target.constructor, handler: descriptor.value as object, spec });
  };
}

/** Every documented route of the controllers loaded so far. */
export function docEntries(): readonly DocEntry[] {
  return entries;
}
