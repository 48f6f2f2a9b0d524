import { Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { AccountsModule } from '../accounts/accounts.module';
import { ReportsModule } from '../reports/reports.module';
import { AdminController } from './admin.controller';

/** The admin dashboard at /admin (HTML, signed-in by API key). */
@Module({
  imports: [AccountsModule, ReportsModule],
  controllers: [AdminController],
})
export class AdminModule implements OnModuleInit {
  constructor(private readonly adapter: HttpAdapterHost) {}

  /** The sign-in form posts application/x-www-form-urlencoded, which Fastify does not parse by itself. */
  onModuleInit(): void {
    const fastify = this.adapter.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify || fastify.hasContentTypeParser('application/x-www-form-urlencoded')) return;
    fastify.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 16 * 1024 }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    });
  }
}
