import { Controller, Get, Query } from '@nestjs/common';
import { z } from 'zod';
import { Access } from 'src/common/auth/auth.decorators';
import { ACCOUNT_ID_PATTERN } from 'src/common/auth/scopes';
import { cursorParam, instant, page, inputInstant } from 'src/common/http/api-schemas';
import { Doc } from 'src/common/http/openapi';
import { ZodQueryPipe } from 'src/common/http/zod-validation.pipe';
import { AuditService, type AuditRow } from './audit.service';

const auditQuerySchema = z
  .strictObject({
    accountId: z.string().regex(ACCOUNT_ID_PATTERN, 'must be an account id').optional(),
    from: inputInstant.optional(),
    to: inputInstant.optional(),
    cursor: cursorParam,
    limit: z.coerce.number().int().min(1).max(500).default(100),
  })
  .refine((q) => !q.from || !q.to || Date.parse(q.from) <= Date.parse(q.to), { message: 'must not be before from', path: ['to'] });

const auditRowSchema = z
  .strictObject({
    id: z.string(),
    chain: z.string(),
    seq: z.number().int(),
    at: instant,
    actor: z.string().meta({ description: 'Who: `key:<id>` of the API key, `system`, `stripe`, `kafka`, …' }),
    action: z.string(),
    accountId: z.string().nullable(),
    before: z.unknown().meta({ description: 'The state before (JSON), null for a creation' }),
    after: z.unknown().meta({ description: 'The state after (JSON)' }),
    correlationId: z.string().nullable(),
    prevHash: z.string(),
    hash: z.string(),
  })
  .meta({ id: 'AuditRow' });

@Controller('v1/audit')
@Access('admin', 'reports')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @Doc({
    id: 'listAudit',
    summary: 'The audit log, newest first: who, what, when, account, before/after, correlation id, hash chain',
    tag: 'Audit',
    query: auditQuerySchema,
    responses: { 200: { description: 'One page', schema: page(auditRowSchema).meta({ id: 'AuditPage' }) } },
  })
  list(
    @Query(new ZodQueryPipe(auditQuerySchema)) q: z.output<typeof auditQuerySchema>,
  ): Promise<{ items: AuditRow[]; nextCursor: string | null }> {
    return this.audit.list({
      accountId: q.accountId,
      from: q.from ? new Date(q.from) : undefined,
      to: q.to ? new Date(q.to) : undefined,
      cursor: q.cursor,
      limit: q.limit,
    });
  }
}
