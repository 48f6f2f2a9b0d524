import { Module } from '@nestjs/common';
import { PlanCatalogModule } from 'src/plan-catalog/plan-catalog.module';
import { StatementsController } from './statements.controller';
import { StatementsService } from './statements.service';

@Module({
  imports: [PlanCatalogModule],
  controllers: [StatementsController],
  providers: [StatementsService],
  exports: [StatementsService],
})
export class StatementsModule {}
