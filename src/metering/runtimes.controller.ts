import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { Access, CurrentPrincipal } from '../accounts/auth/auth.decorators';
import type { Principal } from '../accounts/auth/scopes';
import { Doc } from '../common/http/openapi';
import { RuntimeAdminService } from './runtime-admin.service';

@Controller('v1/admin/runtimes')
@Access('admin')
export class RuntimesController {
  constructor(private readonly runtimes: RuntimeAdminService) {}

  @Post(':runtimeId/terminate')
  @HttpCode(200)
  @Doc('Tell a runtime to terminate (reason admin), audited; asking again while the command is open issues none')
  terminate(@Param('runtimeId') runtimeId: string, @CurrentPrincipal() principal: Principal): Promise<{ runtimeId: string; accountId: string; status: string; commandIssued: boolean }> {
    return this.runtimes.terminate(runtimeId, `key:${principal.keyId}`);
  }
}
