// Owns: account_members, account_member_events, account_seats (kept by triggers on account_members).
import { Module } from '@nestjs/common';
import { MembersController } from './members.controller';
import { MembersService } from './members.service';
import { MembershipConsumer } from './membership-consumer';
import { SeatHistoryHooks } from './seat-history-hooks';

/** Account members (seats), from HTTP and `accounts.membership.v1`. */
@Module({
  controllers: [MembersController],
  providers: [MembersService, MembershipConsumer, SeatHistoryHooks],
  exports: [MembersService],
})
export class MembersModule {}
