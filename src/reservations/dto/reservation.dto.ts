import { z } from 'zod';
import { ACCOUNT_ID_PATTERN } from 'src/common/auth/scopes';
import { credits, instant } from 'src/common/http/api-schemas';
import { environmentRequestShape } from 'src/pricing/environment';
import { RUNTIME_STATUSES } from 'src/metering/entities/runtime.entity';

const id = z.string().regex(ACCOUNT_ID_PATTERN, 'must be 1-128 characters of letters, digits and _.:-');

export const DEFAULT_MINUTES = 10;

export const reservationSchema = z.strictObject({
  accountId: id,
  runtimeId: id,
  userId: id.optional(),
  agentId: id.optional(),
  ...environmentRequestShape,
  minutes: z.number().int('must be an integer').min(1, 'must be at least 1').max(1440, 'must be at most 1440').default(DEFAULT_MINUTES),
});
export type ReservationRequest = z.output<typeof reservationSchema>;

export const extendSchema = z.strictObject({
  minutes: z.number().int('must be an integer').min(1, 'must be at least 1').max(1440, 'must be at most 1440'),
});
export type ExtendRequest = z.output<typeof extendSchema>;

const status = z.enum(RUNTIME_STATUSES);

export const reservationViewSchema = z
  .strictObject({
    reservationId: z.string(),
    runtimeId: z.string(),
    status,
    ratePerHour: credits.meta({ description: 'Credits per hour' }),
    minutes: z.number().int(),
    reserved: credits.meta({ description: 'The hold: rate × minutes' }),
    specDigest: z.string().nullable().meta({
      description:
        'sha256: + SHA-256 of the RFC 8785 serialization of the environment spec priced (null on reservations made before it was recorded)',
    }),
    expiresAt: instant.meta({ description: 'When the reservation runs out (of running time, or of time to start)' }),
    balance: z.strictObject({ total: credits, held: credits, available: credits }),
    runsRemaining: z.number().int().nullable().meta({ description: "Runs left in the plan's period (null: unlimited)" }),
  })
  .meta({ id: 'Reservation' });

export const reservationDetailsSchema = z
  .strictObject({
    reservationId: z.string().nullable(),
    runtimeId: z.string(),
    accountId: z.string(),
    status,
    ratePerHour: credits,
    rateCardVersion: z.string().nullable(),
    specDigest: z.string().nullable().meta({
      description:
        'sha256: + SHA-256 of the RFC 8785 serialization of the environment spec priced (null on reservations made before it was recorded)',
    }),
    minutes: z.number().int(),
    reserved: credits,
    runningSeconds: z.number().int(),
    charged: credits,
    released: credits,
    settlement: z.string().nullable().meta({ description: 'How the runtime was settled (null while it is not)' }),
    terminationReason: z.string().nullable().meta({ description: 'The reason its runtime.terminated (or launch failure) gave, as given' }),
    intervals: z
      .array(z.strictObject({ from: instant, to: instant.nullable() }))
      .meta({ description: 'Running intervals (paused time is not charged)' }),
    explanation: z.string(),
    review: z
      .array(
        z.strictObject({
          flag: z.enum(['launch_failed_contradicted']),
          eventId: z.string(),
          occurredAt: instant,
          reason: z.string().nullable(),
          message: z.string(),
        }),
      )
      .meta({ description: 'Events that contradict the charge, kept for an operator to look at (the charge stands)' }),
    commands: z.array(
      z.strictObject({ id: z.string(), type: z.string(), reason: z.string(), issuedAt: instant, acknowledgedAt: instant.nullable() }),
    ),
  })
  .meta({ id: 'ReservationDetails' });

export const extendHeadersSchema = z.object({
  'idempotency-key': z
    .string()
    .min(1)
    .max(200)
    .meta({ description: 'The same key again adds nothing and returns the reservation as it is now' }),
});
