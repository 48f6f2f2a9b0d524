// Owns: outbox, inbox, notifications_sent, runtime_commands.
// Other modules enqueue (outbox.ts), notify once (notifications.ts), receive once (inbox.ts) and issue commands (commands.ts) through these.
import { Module } from '@nestjs/common';
import { OutboxRelayService } from './outbox-relay.service';

@Module({
  providers: [OutboxRelayService],
  exports: [OutboxRelayService],
})
export class MessagingModule {}
