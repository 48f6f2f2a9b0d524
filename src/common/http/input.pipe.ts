import { Injectable, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { BillingException } from '../errors/billing.exception';

/** Ids in paths (accounts, runtimes, keys, users, jobs): letters, digits and `_.:-`, 1 to 128. */
const PATH_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/**
 * Global checks before the route's own validation: a path parameter must look like an id (no NUL
 * bytes, slashes or 5,000 characters reach SQL), and a body or a query string must not hold NUL
 * characters, which PostgreSQL text and jsonb cannot store.
 */
@Injectable()
export class InputPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'param' && typeof value === 'string' && !PATH_ID.test(value)) {
      throw BillingException.invalid([{ field: metadata.data ?? 'path', message: 'must be 1-128 characters of letters, digits and _.:-' }]);
    }
    if ((metadata.type === 'body' || metadata.type === 'query') && value !== undefined && JSON.stringify(value).includes('\\u0000')) {
      throw BillingException.invalid([{ field: nulField(metadata, value), message: 'must not contain NUL characters' }]);
    }
    return value;
  }
}

/** The query parameter that holds the NUL character, or `body`. */
function nulField(metadata: ArgumentMetadata, value: unknown): string {
  if (metadata.type !== 'query') return 'body';
  if (metadata.data) return metadata.data;
  if (typeof value !== 'object' || value === null) return 'query';
  const found = Object.entries(value).find(([, v]) => JSON.stringify(v)?.includes('\\u0000'));
  return found ? found[0] : 'query';
}
