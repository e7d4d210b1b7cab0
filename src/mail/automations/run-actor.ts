// The automation actor: the worker kind `mail-automations` consumes
// mail.automation-steps (keyed by run id, so one run's steps take turns) and runs
// the runs' timer (run-timer.ts) beside it. Each step is taken in one transaction
// with the run's row locked: the step's message is stored (idempotency key
// `automation:<run id>:<step>`) and the run moved to its next step, its wait, or
// its end. A worker killed mid-run leaves the step either wholly taken or not at
// all, and the redelivered command takes the step the run has stored: each step's
// email is queued once. The sender then applies caps, the send rate and suppressions.
import { createHash } from 'node:crypto';
import type { PoolClient } from 'pg';
import type { ActorMessage, MessageWorkerKind } from '../../platform/actors/worker-kind.ts';
import type { Platform } from '../../platform/platform.ts';
import { withTransaction } from '../../platform/postgres/pool.ts';
import { mailAutomationStepsTopic } from '../../../topics/mail-automations.ts';
import type { MailConfig } from '../config.ts';
import type { MessageOutbox } from '../emails/message-outbox.ts';
import type { Messages } from '../emails/messages.ts';
import type { PreparedMessage } from '../emails/prepare-message.ts';
import { parseMailbox } from '../http/email-address.ts';
import { renderPart, type RenderContact } from '../templates/render.ts';
import { recordRunChanges, type AutomationData, type RunChange } from './automation-data.ts';
import type { AutomationRow, RunRow } from './automations.ts';
import { RunTimer, type AutomationStepCommand } from './run-timer.ts';
import { SENDS_FROM_DOMAIN } from '../domains/domains.ts';

interface ContactRow extends RenderContact {
  status: 'subscribed' | 'unsubscribed';
}

interface StepTaken {
  /** The message to publish (null when none, or the store left it out as suppressed). */
  messageId: string | null;
  changeIds: string[];
  /** The next step is due at once: take it too. */
  again: boolean;
}

const NOTHING: StepTaken = { messageId: null, changeIds: [], again: false };

/** The step's idempotency key: one message per run and step, whatever is repeated. */
export const stepKey = (runId: string, step: number) => `automation:${runId}:${step}`;

export class RunSteps {
  private readonly pg: Platform['pg'];
  private readonly messages: Messages;
  private readonly outbox: MessageOutbox;
  private readonly data: AutomationData;
  /** The length of a minute of a step's delay (MAIL_AUTOMATION_MINUTE_MS). */
  private readonly minuteMs: number;

  constructor(
    pg: Platform['pg'],
    messages: Messages,
    outbox: MessageOutbox,
    data: AutomationData,
    minuteMs: number,
  ) {
    this.pg = pg;
    this.messages = messages;
    this.outbox = outbox;
    this.data = data;
    this.minuteMs = minuteMs;
  }

  /** Takes the run's due steps, one transaction each, until it waits or ends. */
  async advance(runId: string): Promise<void> {
    for (;;) {
      const taken = await withTransaction(this.pg, (db) => this.takeStep(db, runId));
      await Promise.all([this.outbox.publish(taken.messageId ? [taken.messageId] : []), this.data.publish([], taken.changeIds)]);
      if (!taken.again) return;
    }
  }

  private async takeStep(db: PoolClient, runId: string): Promise<StepTaken> {
    const { rows: runs } = await db.query<RunRow>('SELECT * FROM mail_automation_runs WHERE id = $1 FOR UPDATE', [runId]);
    const run = runs[0];
    // Gone with its automation, waiting, or ended: a repeated command does nothing.
    if (!run || run.state !== 'running') return NOTHING;
    const { rows: automations } = await db.query<AutomationRow>('SELECT * FROM mail_automations WHERE id = $1', [run.automation_id]);
    const automation = automations[0]!;
    const change = (state: RunChange['state'], step: number, messageId: string | null = null): RunChange => ({
      run_id: run.id, organization_id: run.organization_id, automation_id: run.automation_id, contact_id: run.contact_id, state, step, message_id: messageId,
    });
    const cancel = async (reason: string): Promise<StepTaken> => {
      await db.query("UPDATE mail_automation_runs SET state = 'canceled', reason = $2, next_at = NULL, finished_at = now(), updated_at = now() WHERE id = $1", [run.id, reason]);
      return { messageId: null, changeIds: await recordRunChanges(db, [change('canceled', run.step)]), again: false };
    };

    const step = run.steps[run.step]!;
    const { rows: contacts } = await db.query<ContactRow>('SELECT email, first_name, last_name, properties, status FROM mail_contacts WHERE id = $1', [run.contact_id]);
    const contact = contacts[0];
    if (!contact) return cancel('The contact was deleted.');
    if (contact.status === 'unsubscribed') return cancel('The contact unsubscribed.');
    const { rows: versions } = await db.query<{ subject: string; html: string | null; text_body: string | null }>(
      'SELECT subject, html, text_body FROM mail_template_versions WHERE template_id = $1 AND version = $2',
      [step.template_id, step.version],
    );
    const version = versions[0];
    if (!version) return cancel(`Template ${step.template_slug} version ${step.version} was deleted.`);
    const subject = renderPart(version.subject, 'subject', contact).trim();
    if (subject === '') return cancel(`The subject of step ${run.step} renders empty for this contact.`);

    const key = stepKey(run.id, run.step);
    const message: PreparedMessage = {
      from: parseMailbox(automation.from_address)!,
      to: [contact.email],
      cc: [],
      bcc: [],
      reply_to: automation.reply_to ? [automation.reply_to] : [],
      recipientKeys: [contact.email.toLowerCase()],
      subject,
      html: version.html === null ? null : renderPart(version.html, 'html', contact),
      text: version.text_body === null ? null : renderPart(version.text_body, 'text', contact),
      headers: {},
      tags: [{ name: 'automation_id', value: automation.id }, { name: 'automation_run_id', value: run.id }],
      topic_id: null,
      scheduled_at: null,
      attachments: [],
      idempotencyKey: key,
      requestHash: createHash('sha256').update(key).digest(),
    };
    const { rows: domains } = await db.query(`SELECT 1 FROM mail_domains WHERE organization_id = $1 AND name = $2 AND ${SENDS_FROM_DOMAIN}`, [run.organization_id, automation.from_domain]);
    if (domains.length === 0) return cancel(`The sending domain ${automation.from_domain} is no longer verified; verify it again.`);
    const result = await this.messages.storeIn(db, run.organization_id, null, message);
    // The step's key taken by another message: retrying cannot help.
    if (!result.ok) return cancel(`The step's idempotency key ${key} is held by another message.`);
    const stored = result.stored;
    const changes = [change('step_queued', run.step, stored.id)];

    const next = run.step + 1;
    const following = run.steps[next];
    let again = false;
    if (!following) {
      await db.query("UPDATE mail_automation_runs SET state = 'completed', step = $2, next_at = NULL, finished_at = now(), updated_at = now() WHERE id = $1", [run.id, next]);
      changes.push(change('completed', next));
    } else if (following.delay_minutes > 0) {
      await db.query(
        "UPDATE mail_automation_runs SET state = 'waiting', step = $2, next_at = now() + make_interval(secs => $3::double precision / 1000), updated_at = now() WHERE id = $1",
        [run.id, next, following.delay_minutes * this.minuteMs],
      );
      changes.push(change('waiting', next));
    } else {
      await db.query('UPDATE mail_automation_runs SET step = $2, updated_at = now() WHERE id = $1', [run.id, next]);
      again = true;
    }
    return { messageId: stored.unpublished ? stored.id : null, changeIds: await recordRunChanges(db, changes), again };
  }
}

export function automationKind(platform: Platform, deps: { messages: Messages; messageOutbox: MessageOutbox; automationData: AutomationData }, config: Pick<MailConfig, 'MAIL_AUTOMATION_MINUTE_MS'>): MessageWorkerKind<AutomationStepCommand, undefined> {
  const log = platform.log.child({ component: 'mail-automations' });
  const steps = new RunSteps(platform.pg, deps.messages, deps.messageOutbox, deps.automationData, config.MAIL_AUTOMATION_MINUTE_MS);
  return {
    kind: 'mail-automations',
    topics: [mailAutomationStepsTopic],
    concurrency: 4,
    background: new RunTimer(platform.pg, platform.publisher, log),
    handle: ({ value }: ActorMessage<AutomationStepCommand>) => steps.advance(value.run_id),
  };
}
