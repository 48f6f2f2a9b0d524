import { Body, Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { ZodPipe } from 'src/common/http/zod-validation.pipe';
import { Access, CurrentPrincipal } from 'src/common/auth/auth.decorators';
import type { Principal } from 'src/common/auth/scopes';
import { ApiKeysService, type CreatedKey } from './auth/api-keys.service';
import { createApiKeySchema, createdKeySchema, revokedKeySchema, type CreateApiKeyDto } from './dto/api-key.dto';
import { Doc } from 'src/common/http/openapi';

@Controller('v1/admin/api-keys')
@Access('admin')
export class ApiKeysController {
  constructor(private readonly keys: ApiKeysService) {}

  @Post()
  @HttpCode(201)
  @Doc({
    id: 'createApiKey',
    summary: 'Create an API key (the key is shown once)',
    tag: 'API keys',
    body: createApiKeySchema,
    responses: { 201: { description: 'Created', schema: createdKeySchema } },
  })
  create(@Body(new ZodPipe(createApiKeySchema)) body: CreateApiKeyDto, @CurrentPrincipal() principal: Principal): Promise<CreatedKey> {
    return this.keys.create(body.scopes, body.name ?? null, `key:${principal.keyId}`, { knownAccounts: true });
  }

  @Delete(':keyId')
  @Doc({
    id: 'revokeApiKey',
    summary: 'Revoke an API key',
    tag: 'API keys',
    responses: { 200: { description: 'Revoked (again: the first revocation)', schema: revokedKeySchema } },
    errors: ['DL_BILLING_NOT_FOUND'],
  })
  revoke(@Param('keyId') keyId: string, @CurrentPrincipal() principal: Principal): Promise<{ id: string; revokedAt: string }> {
    return this.keys.revoke(keyId, `key:${principal.keyId}`);
  }
}
