import { z } from 'zod';

export const FIXED_SCOPES = ['control-plane', 'admin', 'reports'] as const;
export const ACCOUNT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

export const scopeSchema = z.union([
  z.enum(FIXED_SCOPES),
  z.string().regex(/^account:[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/, 'must be control-plane, admin, reports or account:<id>'),
]);

/** Who made the request, as the API key says. */
export interface Principal {
  keyId: string;
  scopes: string[];
}

/**
 * A scope; `{accountParam}`: the key of the account named by that path parameter; `authenticated`:
 * any valid key, the handler checks ownership itself (the account is not in the path).
 */
export type Requirement = (typeof FIXED_SCOPES)[number] | { accountParam: string } | 'authenticated';

/** `admin` passes every check; otherwise one requirement must be met. */
export function isAllowed(principal: Principal, requirements: Requirement[], params: Record<string, string>): boolean {
  if (principal.scopes.includes('admin')) return true;
  return requirements.some((req) =>
    req === 'authenticated'
      ? true
      : typeof req === 'string'
        ? principal.scopes.includes(req)
        : params[req.accountParam] !== undefined && principal.scopes.includes(`account:${params[req.accountParam]}`),
  );
}

/** May this principal read or act on this account? */
export function mayActOn(principal: Principal, accountId: string, scopes: string[] = ['control-plane']): boolean {
  return (
    principal.scopes.includes('admin') ||
    principal.scopes.includes(`account:${accountId}`) ||
    scopes.some((s) => principal.scopes.includes(s))
  );
}
