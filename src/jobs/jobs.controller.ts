import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { Access } from '../accounts/auth/auth.decorators';
import { Doc } from '../common/http/openapi';
import { JobsService, type JobResult } from './jobs.service';

@Controller('v1/admin/jobs')
@Access('admin')
export class JobsController {
  constructor(private readonly jobs: JobsService) {}

  @Post(':job/run')
  @HttpCode(200)
  @Doc('Run a scheduled job now, under the same advisory lock as its schedule')
  run(@Param('job') job: string): Promise<JobResult> {
    return this.jobs.run(job);
  }
}
