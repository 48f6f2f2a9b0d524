import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { Access, CurrentPrincipal } from 'src/common/auth/auth.decorators';
import type { Principal } from 'src/common/auth/scopes';
import { z } from 'zod';
import { Doc } from 'src/common/http/openapi';
import { RuntimeAdminService } from './runtime-admin.service';

const terminateResultSchema = z
  .strictObject({
    runtimeId: z.string(),
    accountId: z.string(),
    status: z.string(),
    commandIssued: z.boolean().meta({ description: 'false: a terminate command was already open, none issued' }),
  })
  .meta({ id: 'RuntimeTerminate' });

@Controller('v1/admin/runtimes')
@Access('admin')
export class RuntimesController {
  constructor(private readonly runtimes: RuntimeAdminService) {}

  @Post(':runtimeId/terminate')
  @HttpCode(200)
  @Doc({
    id: 'terminateRuntime',
    summary: 'Tell a runtime to terminate (reason admin), audited; asking again while the command is open issues none',
    tag: 'Reservations',
    responses: { 200: { description: 'The command issued, or the open one', schema: terminateResultSchema } },
    errors: ['DL_BILLING_NOT_FOUND'],
  })
  terminate(
    @Param('runtimeId') runtimeId: string,
    @CurrentPrincipal() principal: Principal,
  ): Promise<{ runtimeId: string; accountId: string; status: string; commandIssued: boolean }> {
    return this.runtimes.terminate(runtimeId, `key:${principal.keyId}`);
  }
}
