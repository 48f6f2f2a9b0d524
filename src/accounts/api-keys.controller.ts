import { Body, Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { ZodPipe } from '../common/http/zod-validation.pipe';
import { Access, CurrentPrincipal } from './auth/auth.decorators';
import type { Principal } from './auth/scopes';
import { ApiKeysService, type CreatedKey } from './auth/api-keys.service';
import { createApiKeySchema, type CreateApiKeyDto } from './dto/api-key.dto';

@Controller('v1/admin/api-keys')
@Access('admin')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Post()
  @HttpCode(201)
  create(@Body(new ZodPipe(createApiKeySchema)) body: CreateApiKeyDto, @CurrentPrincipal() principal: Principal): Promise<CreatedKey> {
    return this.keys.create(body.scopes, body.name ?? null, `key:${principal.keyId}`, { knownAccounts: true });
  }

  @Delete(':keyId')
  revoke(@Param('keyId') keyId: string, @CurrentPrincipal() principal: Principal): Promise<{ id: string; revokedAt: string }> {
    return this.keys.revoke(keyId, `key:${principal.keyId}`);
  }
}
