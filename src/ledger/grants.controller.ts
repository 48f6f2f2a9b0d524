import { Body, Controller, Headers, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { Access, CurrentPrincipal } from 'src/common/auth/auth.decorators';
import type { Principal } from 'src/common/auth/scopes';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { BillingException } from 'src/common/errors/billing.exception';
import { Doc } from 'src/common/http/openapi';
import { parseOrThrow, ZodPipe } from 'src/common/http/zod-validation.pipe';
import { formatCredits, parseCredits } from 'src/common/money';
import { notifyOnce } from 'src/messaging/notifications';
import { topicsOf } from 'src/messaging/topics';
import { createGrantSchema, grantResultSchema, idempotencyHeadersSchema, idempotencyKeySchema, type CreateGrantDto } from './dto/grant.dto';
import { balanceJson, grantJson } from './http';
import { LedgerService } from './ledger.service';
import { namespacedKey } from './operations/operation';

@Controller('v1/admin/accounts/:id/grants')
@Access('admin')
export class GrantsController {
  constructor(
    private readonly ledger: LedgerService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Grants credits. With an `Idempotency-Key` header the same request again returns the same grant
   * (200) and a different request under that key is refused (409); without one, every call grants.
   */
  @Post()
  @HttpCode(201)
  @Doc({
    id: 'createGrant',
    summary: 'Grant credits to an account',
    description:
      'With an `Idempotency-Key` header the same request again returns the same grant (200) and a different one is a 409; without one, every call grants.',
    tag: 'Grants',
    body: createGrantSchema,
    headers: idempotencyHeadersSchema,
    responses: {
      201: { description: 'Granted', schema: grantResultSchema },
      200: { description: 'The same request again: the same grant', schema: grantResultSchema },
    },
    errors: ['DL_BILLING_NOT_FOUND', 'DL_BILLING_IDEMPOTENCY_CONFLICT'],
  })
  async create(
    @Param('id') accountId: string,
    @Body(new ZodPipe(createGrantSchema)) body: CreateGrantDto,
    @Headers('idempotency-key') key: string | undefined,
    @CurrentPrincipal() principal: Principal,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Record<string, unknown>> {
    const idempotencyKey = parseOrThrow(idempotencyKeySchema, key, 'Idempotency-Key');
    if (!(await this.ledger.accountExists(accountId))) throw BillingException.notFound(`Account ${accountId}`);
    const input = {
      accountId,
      source: body.source,
      amount: parseCredits(body.credits)!,
      expiresAt: body.expiresAt ? new Date(body.expiresAt) : null,
      priority: body.priority,
      idempotencyKey: idempotencyKey ? namespacedKey('http', idempotencyKey) : `auto:${randomUUID()}`,
      reason: body.reason,
      actor: `key:${principal.keyId}`,
      correlationId: request.id,
    };
    // The grant and its `credits.granted` in one transaction (the outbox): once per grant, a replay finds it sent.
    const result = await this.ledger.transact(async (em) => {
      const granted = await this.ledger.grant(em, input);
      const { grant } = granted;
      const data = {
        grantId: grant.id,
        source: grant.source,
        credits: formatCredits(grant.amount),
        expiresAt: grant.expiresAt?.toISOString() ?? null,
        reason: input.reason,
      };
      await notifyOnce(
        em,
        topicsOf(this.config).notifications,
        [{ type: 'credits.granted', accountId, cause: `credits.granted:${grant.id}`, data }],
        grant.createdAt,
      );
      return granted;
    });
    void reply.status(result.replayed ? 200 : 201);
    return { grant: grantJson(result.grant), balance: balanceJson(result.balance), transactionId: result.transactionId };
  }
}
