import { Controller, Delete, Get, HttpCode, Param, Put, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Access, CurrentPrincipal } from 'src/common/auth/auth.decorators';
import { ACCOUNT_ID_PATTERN, type Principal } from 'src/common/auth/scopes';
import { BillingException } from 'src/common/errors/billing.exception';
import { Doc } from 'src/common/http/openapi';
import { memberSchema, membersSchema, USER_ID } from './dto/member.dto';
import { MembersService, type MemberView } from './members.service';

function checkIds(accountId: string, userId?: string): void {
  const findings = [];
  if (!ACCOUNT_ID_PATTERN.test(accountId)) findings.push({ field: 'id', message: 'must be 1-128 characters of letters, digits and _.:-' });
  if (userId !== undefined && !USER_ID.test(userId)) {
    findings.push({ field: 'userId', message: 'must be 1-128 characters of letters, digits and _.:-' });
  }
  if (findings.length > 0) throw BillingException.invalid(findings);
}

/** Seat changes (also accepted from `accounts.membership.v1`). */
@Controller('v1/accounts/:id/members')
export class MembersController {
  constructor(private readonly members: MembersService) {}

  @Get()
  @Access('admin', 'control-plane', 'reports', { accountParam: 'id' })
  @Doc({
    id: 'listMembers',
    summary: "An account's members and its seat count (active members)",
    tag: 'Members',
    responses: { 200: { description: 'The members', schema: membersSchema } },
    errors: ['DL_BILLING_NOT_FOUND'],
  })
  list(@Param('id') accountId: string): Promise<Record<string, unknown>> {
    checkIds(accountId);
    return this.members.list(accountId);
  }

  @Put(':userId')
  @HttpCode(200)
  @Access('admin', 'control-plane')
  @Doc({
    id: 'addMember',
    summary: 'Add a member (a seat)',
    tag: 'Members',
    responses: { 200: { description: 'The member and the seat count', schema: memberSchema } },
    errors: ['DL_BILLING_NOT_FOUND'],
  })
  add(
    @Param('id') accountId: string,
    @Param('userId') userId: string,
    @CurrentPrincipal() p: Principal,
    @Req() req: FastifyRequest,
  ): Promise<MemberView> {
    checkIds(accountId, userId);
    return this.members.set(accountId, userId, true, `key:${p.keyId}`, req.id);
  }

  @Delete(':userId')
  @HttpCode(200)
  @Access('admin', 'control-plane')
  @Doc({
    id: 'removeMember',
    summary: 'Remove a member (a seat)',
    tag: 'Members',
    responses: { 200: { description: 'The member and the seat count', schema: memberSchema } },
    errors: ['DL_BILLING_NOT_FOUND'],
  })
  remove(
    @Param('id') accountId: string,
    @Param('userId') userId: string,
    @CurrentPrincipal() p: Principal,
    @Req() req: FastifyRequest,
  ): Promise<MemberView> {
    checkIds(accountId, userId);
    return this.members.set(accountId, userId, false, `key:${p.keyId}`, req.id);
  }
}
