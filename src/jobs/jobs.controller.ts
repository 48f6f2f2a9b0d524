import { Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Access, CurrentPrincipal } from 'src/common/auth/auth.decorators';
import type { Principal } from 'src/common/auth/scopes';
import { Doc } from 'src/common/http/openapi';
import { z } from 'zod';
import { JOB_NAMES, jobResultSchema, JobsService, type JobResult } from './jobs.service';

@Controller('v1/admin/jobs')
@Access('admin')
export class JobsController {
  constructor(private readonly jobs: JobsService) {}

  @Post(':job/run')
  @HttpCode(200)
  @Doc({
    id: 'runJob',
    summary: 'Run a scheduled job now, under the same advisory lock as its schedule (audited as job.run)',
    tag: 'Jobs',
    params: { job: z.enum(JOB_NAMES) },
    responses: { 200: { description: 'Ran, or skipped because another instance holds its lock', schema: jobResultSchema } },
    errors: ['DL_BILLING_NOT_FOUND', 'DL_BILLING_UNAVAILABLE'],
  })
  run(@Param('job') job: string, @CurrentPrincipal() principal: Principal, @Req() request: FastifyRequest): Promise<JobResult> {
    return this.jobs.run(job, `key:${principal.keyId}`, request.id);
  }
}
