import { Controller, createParamDecorator, type ExecutionContext, HttpCode, Param, Post, UseFilters } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiKeysService } from 'src/accounts/auth/api-keys.service';
import { Public } from 'src/common/auth/auth.decorators';
import { BillingException } from 'src/common/errors/billing.exception';
import { parseOrThrow } from 'src/common/http/zod-validation.pipe';
import { jsonLimitProblem } from 'src/common/json-limits';
import { parseCredits } from 'src/common/money';
import { Clock } from 'src/infra/clock/clock';
import { JobsService } from 'src/jobs/jobs.service';
import { createGrantSchema } from 'src/ledger/dto/grant.dto';
import { checkExpiry } from 'src/ledger/operations/grant';
import { LedgerService } from 'src/ledger/ledger.service';
import { RuntimeAdminService } from 'src/metering/runtime-admin.service';
import { setPlanSchema } from 'src/plans/dto/plan.dto';
import { PlanAdminService } from 'src/plans/plan-admin.service';
import { PlanCatalog } from 'src/plan-catalog/plan-catalog';
import { spendLimitSchema, suspensionSchema } from 'src/spend-limits/dto/spend-limit.dto';
import { SpendLimitsService } from 'src/spend-limits/spend-limits.service';
import { SuspensionService } from 'src/spend-limits/suspension.service';
import { AdminAuth, type AdminViewer } from './admin-auth';
import { flashSignature } from './admin-session';
import { correctionPage, grantFields, limitFields, planFields, suspendFields, type CorrectableForm } from './action-forms';
import { credits, esc, hidden, shell } from './render';
import { ConsoleErrorFilter } from './console-error.filter';

/** What an action reads from its request: the form, the session cookie, the URL to post the confirmation to, and the reply to redirect. */
interface ActionRequest {
  body: unknown;
  cookies: string | undefined;
  url: string;
  id: string;
  reply: FastifyReply;
}

/** The request of an action, as one parameter. */
const ActionForm = createParamDecorator((_: unknown, ctx: ExecutionContext): ActionRequest => {
  const http = ctx.switchToHttp();
  const req = http.getRequest<FastifyRequest>();
  return { body: req.body, cookies: req.headers.cookie, url: req.url, id: req.id, reply: http.getResponse<FastifyReply>() };
});

/**
 * The console's actions. Each goes through the same validation (the HTTP API's schemas, so the same
 * findings) and the same service as the HTTP API, with the signed-in key as the audited actor. A
 * first POST validates and answers with a confirmation page; only the confirmed POST acts, then
 * redirects back (so a reload does not act twice; a grant also carries an idempotency key).
 */
@Controller('admin')
@UseFilters(ConsoleErrorFilter)
@Public()
export class AdminActionsController {
  constructor(
    private readonly auth: AdminAuth,
    private readonly ledger: LedgerService,
    private readonly plans: PlanAdminService,
    private readonly limits: SpendLimitsService,
    private readonly suspension: SuspensionService,
    private readonly runtimes: RuntimeAdminService,
    private readonly keys: ApiKeysService,
    private readonly jobs: JobsService,
    private readonly catalog: PlanCatalog,
    private readonly clock: Clock,
  ) {}

  /** The plan form's choices are the catalog's. */
  private readonly planForm: CorrectableForm = {
    title: 'Change plan or Enterprise overrides',
    button: 'Change plan',
    fields: (values, findings) => planFields(this.catalog.planIds(), values, findings),
  };

  /**
   * Every action's two steps, behind the session and CSRF checks of `AdminAuth.action`: `prepare`
   * validates the form and says what would happen; an unconfirmed POST gets the confirmation page,
   * a confirmed one runs the action and is redirected to `back` with its outcome.
   */
  private act(
    request: ActionRequest,
    back: string,
    form: CorrectableForm | null,
    prepare: (viewer: AdminViewer, form: Record<string, string>) => Promise<Confirmed>,
  ): Promise<string> {
    // A form with fields refused with a 400 comes back with what was typed, each finding beside its field.
    const correct =
      form &&
      ((viewer: AdminViewer, fields: Record<string, string>, error: BillingException) =>
        correctionPage(viewer, form, request.url, back, fields, error));
    return this.auth.action(
      request.reply,
      request.cookies,
      request.body,
      async (viewer, fields) => {
        const action = await prepare(viewer, fields);
        if (fields.confirmed !== 'yes') {
          const what = typeof action.what === 'string' ? action.what : await action.what();
          return confirm(viewer, what, request.url, fields, back, action.button);
        }
        return done(request.reply, back, await action.run(), viewer.csrf);
      },
      correct ?? undefined,
    );
  }

  @Post('accounts/:id/grant')
  @HttpCode(200)
  grant(@Param('id') id: string, @ActionForm() request: ActionRequest): Promise<string> {
    return this.act(request, back(id), GRANT_FORM, async (viewer, form) => {
      const dto = parseOrThrow(createGrantSchema, {
        credits: form.credits,
        reason: form.reason,
        ...(form.expiresAt ? { expiresAt: form.expiresAt } : {}),
      });
      // Refused before the confirmation, as the ledger would refuse it after.
      checkExpiry(dto.expiresAt ? new Date(dto.expiresAt) : null, this.clock.now());
      if (!(await this.ledger.accountExists(id))) throw BillingException.notFound(`Account ${id}`);
      const key = /^[A-Za-z0-9-]{8,64}$/.test(form.idempotencyKey ?? '') ? form.idempotencyKey! : null;
      if (!key) throw BillingException.invalid([{ field: 'idempotencyKey', message: 'missing: reload the account page' }]);
      const what = `Grant ${credits(dto.credits)} credits to ${id}${dto.expiresAt ? `, expiring ${dto.expiresAt}` : ', not expiring'}, because: ${dto.reason}`;
      return confirmThen(what, 'Grant', async () => {
        const result = await this.ledger.grantTx({
          accountId: id,
          source: 'admin',
          amount: parseCredits(dto.credits)!,
          expiresAt: dto.expiresAt ? new Date(dto.expiresAt) : null,
          idempotencyKey: `admin-console:${key}`,
          reason: dto.reason,
          actor: `key:${viewer.keyId}`,
          correlationId: request.id,
        });
        return result.replayed ? 'That grant was already made: nothing more was granted.' : `Granted ${credits(dto.credits)} credits.`;
      });
    });
  }

  @Post('accounts/:id/plan')
  @HttpCode(200)
  plan(@Param('id') id: string, @ActionForm() request: ActionRequest): Promise<string> {
    return this.act(request, back(id), this.planForm, async (viewer, form) => {
      let overrides: unknown = null;
      if (form.overrides?.trim()) {
        // JSON typed into a form: the same limits as a JSON body, before anything recurses over it.
        const problem = jsonLimitProblem(form.overrides);
        if (problem !== undefined) throw BillingException.invalid([{ field: 'overrides', message: problem }]);
        try {
          overrides = JSON.parse(form.overrides);
        } catch {
          throw BillingException.invalid([{ field: 'overrides', message: 'must be a JSON object, e.g. {"concurrentRuntimes": 50}' }]);
        }
      }
      const dto = parseOrThrow(this.catalog.withPlanIds(setPlanSchema), { plan: form.plan, overrides });
      // Checked before the confirmation too, so a bad override is refused at once with the API's findings.
      this.plans.checkOverrides(dto);
      const current = await this.plans.view(id);
      const what = `Change ${id} from ${current.plan} to ${dto.plan}${overrides ? ` with overrides ${JSON.stringify(overrides)}` : ' without overrides'}`;
      return confirmThen(what, 'Change plan', async () => {
        await this.plans.setPlan(id, dto, `key:${viewer.keyId}`, request.id);
        return `Plan set to ${dto.plan}.`;
      });
    });
  }

  @Post('accounts/:id/spend-limit')
  @HttpCode(200)
  spendLimit(@Param('id') id: string, @ActionForm() request: ActionRequest): Promise<string> {
    return this.act(request, back(id), LIMIT_FORM, async (viewer, form) => {
      const typed = (form.thresholds ?? '')
        .split(/[\s,%]+/)
        .filter(Boolean)
        .map(Number);
      const userId = form.userId?.trim() || undefined;
      const cap = form.credits?.trim() || null;
      if (!(await this.ledger.accountExists(id))) throw BillingException.notFound(`Account ${id}`);
      // Clearing a limit keeps the thresholds that limit has (the form shows the account's, not a member's).
      const thresholds = cap === null ? (await this.limits.get(id, userId ?? null)).thresholds : typed;
      const dto = parseOrThrow(spendLimitSchema, {
        credits: cap,
        period: 'month',
        thresholds,
        ...(userId ? { scope: { userId } } : {}),
      });
      const scope = dto.scope ? `member ${dto.scope.userId} of ${id}` : id;
      const what =
        dto.credits === null
          ? `Clear the monthly spend limit of ${scope}`
          : `Limit ${scope} to ${credits(dto.credits)} credits a month, ${dto.thresholds.length ? `alerting at ${dto.thresholds.join(', ')} %` : 'with no alerts before it is reached'}. Runtimes are told to terminate if the spend is already past it.`;
      return confirmThen(what, dto.credits === null ? 'Clear limit' : 'Set limit', async () => {
        const view = await this.limits.set(id, dto, `key:${viewer.keyId}`);
        const terminated = view.terminated.length ? `; ${view.terminated.length} runtime(s) told to terminate` : '';
        return `${dto.credits === null ? 'Spend limit cleared' : 'Spend limit set'}${terminated}.`;
      });
    });
  }

  @Post('accounts/:id/suspension')
  @HttpCode(200)
  suspend(@Param('id') id: string, @ActionForm() request: ActionRequest): Promise<string> {
    return this.act(request, back(id), suspensionForm(request.body), async (viewer, form) => {
      if (form.suspended !== 'yes' && form.suspended !== 'no') {
        throw BillingException.invalid([{ field: 'suspended', message: 'must be yes or no' }]);
      }
      const dto = parseOrThrow(suspensionSchema, {
        suspended: form.suspended === 'yes',
        ...(form.reason?.trim() ? { reason: form.reason.trim() } : {}),
        ...(form.cause === 'non_payment' ? { cause: 'non_payment' } : {}),
      });
      if (!(await this.ledger.accountExists(id))) throw BillingException.notFound(`Account ${id}`);
      const cause = dto.cause ?? 'admin';
      const what = dto.suspended
        ? `Suspend ${id}: new launches are refused and its runtimes are told to terminate. Reason: ${dto.reason ?? '—'}`
        : cause === 'non_payment'
          ? `Waive the suspension of ${id} for non-payment (until its subscription is past due again). Reason: ${dto.reason ?? '—'}`
          : `Reactivate ${id}. Reason: ${dto.reason ?? '—'}`;
      const button = dto.suspended ? 'Suspend' : cause === 'non_payment' ? 'Waive' : 'Reactivate';
      return confirmThen(what, button, async () => {
        const result = await this.suspension.set(id, dto.suspended, dto.reason ?? null, `key:${viewer.keyId}`, cause);
        if (dto.suspended) return `Account suspended; ${result.terminated.length} runtime(s) told to terminate.`;
        if (result.status === 'active') return 'Account reactivated.';
        return cause === 'non_payment'
          ? "Suspension for non-payment waived; the admin's suspension stays."
          : 'Admin suspension lifted; the account stays suspended for non-payment.';
      });
    });
  }

  @Post('accounts/:id/runtimes/:runtimeId/terminate')
  @HttpCode(200)
  terminate(@Param('id') id: string, @Param('runtimeId') runtimeId: string, @ActionForm() request: ActionRequest): Promise<string> {
    return this.act(request, back(id), null, (viewer) => {
      // What it will do is read for the confirmation page only: the confirmed step terminates whatever the runtime's state.
      const what = async () => {
        const live = (await this.runtimes.live(id)).find((r) => r.runtimeId === runtimeId);
        if (!live) throw BillingException.notFound(`Live runtime ${runtimeId} of account ${id}`);
        return `Tell runtime ${runtimeId} (${live.status}, running for ${live.runningSeconds} s, ${credits(live.chargedSoFar)} credits so far) to terminate. It is charged for its running time when it reports its termination.`;
      };
      return Promise.resolve(
        confirmThen(what, 'Terminate', async () => {
          const result = await this.runtimes.terminate(runtimeId, `key:${viewer.keyId}`, id);
          return result.commandIssued ? `Runtime ${runtimeId} told to terminate.` : `Runtime ${runtimeId} was already told to terminate.`;
        }),
      );
    });
  }

  @Post('accounts/:id/keys/:keyId/revoke')
  @HttpCode(200)
  revoke(@Param('id') id: string, @Param('keyId') keyId: string, @ActionForm() request: ActionRequest): Promise<string> {
    return this.act(request, back(id), null, async (viewer) => {
      const key = await this.keys.keyOf(id, keyId);
      if (!key) throw BillingException.notFound(`API key ${keyId} of account ${id}`);
      const what = `Revoke API key ${keyId}${key.name ? ` (${key.name})` : ''}: every request with it is refused from now on.`;
      return confirmThen(what, 'Revoke', async () => {
        await this.keys.revoke(keyId, `key:${viewer.keyId}`);
        return `API key ${keyId} revoked.`;
      });
    });
  }

  @Post('jobs/:job/run')
  @HttpCode(200)
  runJob(@Param('job') job: string, @ActionForm() request: ActionRequest): Promise<string> {
    return this.act(request, '/admin/health', null, (viewer) => {
      if (!this.jobs.names().includes(job)) throw BillingException.notFound(`Job ${job} (jobs available: ${this.jobs.names().join(', ')})`);
      const what = `Run the ${job} job now (under its lock: if another instance is running it, nothing happens).`;
      return Promise.resolve(
        confirmThen(what, 'Run job', async () => {
          const result = await this.jobs.run(job, `key:${viewer.keyId}`, request.id);
          return result.ran ? `Job ${job} ran.` : `Job ${job} did not run: ${result.reason}.`;
        }),
      );
    });
  }
}

/** What a confirmed action does, and what its confirmation page says (read only for that page when a function). */
interface Confirmed {
  what: string | (() => Promise<string>);
  button: string;
  /** Acts and returns the message shown after the redirect. */
  run: () => Promise<string>;
}

function confirmThen(what: Confirmed['what'], button: string, run: () => Promise<string>): Confirmed {
  return { what, button, run };
}

const GRANT_FORM: CorrectableForm = { title: 'Grant credits', button: 'Grant', fields: grantFields };
const LIMIT_FORM: CorrectableForm = { title: 'Set or clear a spend limit', button: 'Set limit', fields: limitFields };

/** The suspension form says what it does (suspend or reactivate) by its hidden field. */
function suspensionForm(body: unknown): CorrectableForm {
  const form = body as { suspended?: unknown; cause?: unknown } | null;
  const reactivate = form?.suspended === 'no';
  if (reactivate && form?.cause === 'non_payment') {
    return { title: 'Waive the suspension for non-payment', button: 'Waive', fields: suspendFields };
  }
  return reactivate
    ? { title: 'Reactivate the account', button: 'Reactivate', fields: suspendFields }
    : { title: 'Suspend the account', button: 'Suspend', danger: true, fields: suspendFields };
}

function back(accountId: string): string {
  return `/admin/accounts/${encodeURIComponent(accountId)}`;
}

/** The confirmation step: what will happen, the same fields again with `confirmed`, and a way out. */
function confirm(viewer: AdminViewer, what: string, action: string, form: Record<string, string>, cancel: string, button: string): string {
  const { csrf: _csrf, confirmed: _confirmed, ...fields } = form;
  return shell(
    'Confirm',
    viewer,
    null,
    `<section id="confirm" aria-labelledby="confirm-title"><h2 id="confirm-title">Please confirm</h2><p>${esc(what)}</p>
<form method="post" action="${esc(action)}" class="action">${hidden({ ...fields, csrf: viewer.csrf, confirmed: 'yes' })}<button type="submit" autofocus>${esc(button)}</button> <a href="${esc(cancel)}">Cancel</a></form></section>`,
  );
}

/** After an action: back to where it came from, with what happened, signed for this session (Post/Redirect/Get). */
function done(reply: FastifyReply, to: string, message: string, csrf: string): string {
  const sig = flashSignature(csrf, to, message);
  void reply.code(303).header('location', `${to}?done=${encodeURIComponent(message)}&sig=${sig}`);
  return '';
}
