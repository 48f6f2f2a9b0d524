import { Injectable, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { BillingException } from '../errors/billing.exception';

/** Ids in paths (accounts, runtimes, keys, users, jobs): letters, digits and `_.:-`, 1 to 128. */
const PATH_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/**
 * Global checks before the route's own validation: a path parameter must look like an id (no NUL
 * bytes, slashes or 5,000 characters reach SQL), and a body must not hold NUL characters, which
 * PostgreSQL text and jsonb cannot store.
 */
@Injectable()
export class InputPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'param' && typeof value === 'string' && !PATH_ID.test(value)) {
      throw BillingException.invalid([{ field: metadata.data ?? 'path', message: 'must be 1-128 characters of letters, digits and _.:-' }]);
    }
    if (metadata.type === 'body' && value !== undefined && JSON.stringify(value).includes('\\u0000')) {
      throw BillingException.invalid([{ field: 'body', message: 'must not contain NUL characters' }]);
    }
    return value;
  }
}
