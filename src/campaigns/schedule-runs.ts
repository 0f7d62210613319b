// The schedule runner (INTERFACE 3.1, DECISIONS §6): enrols the audiences of `schedule` and
// `dynamic_schedule` campaigns of the workspaces this actor owns; the executor then runs the
// workflows. Everything it knows is in PostgreSQL, so it survives restarts, and each run is
// started once whatever the number of replicas: a run's row in campaign_runs, inserted with ON
// CONFLICT DO NOTHING, is the lease only its inserter holds.
//
// - `schedule` with `send_at`: one run (key `at:<instant>`) when send_at passes; the campaign
//   shows `scheduled` until then and `completed` once the run has enrolled its audience, or
//   `failed` when it cannot start (no push content, a broken template).
// - `schedule` with `cron` + `timezone`: a run per tick (key `cron:<tick>`). Ticks missed
//   while no Herald was running are not caught up one by one: the latest runs once.
// - `dynamic_schedule` (`trait` + `offset_minutes`): the audience's people whose trait date +
//   offset has passed (and is after the campaign went live) enter, each under the run
//   `dyn:<date>`, so a person enters once per date; a new date in the trait enters again. The
//   audience is scanned when the next person is due, and at least every `scanMs`
//   (HERALD_DYNAMIC_SCAN_MS, which finds dates set since).
//
// A run walks its audience in keyset pages of ENROL_PAGE, each page's enrolments and the run's
// progress written in one transaction; a run whose lease lapsed (store/leases.ts: its holder
// gone, or not renewed for STALE_RUN_MS) is taken over and resumes after the last page written. At most
// HERALD_SCHEDULE_AUDIENCE_CEILING people per run: the rest is not enrolled and the run
// records `truncated` (and logs a warning).
import type { Db } from '../store/db.js';
import { audiencePages, FIRST_ID } from '../store/audience.js';
import { dynamicDue, dynamicNext, finishRun, liveSchedules, runProgress, setSystemStatus, startRun, takeOverLapsed, type LiveSchedule, type RunLease } from '../store/campaign-runs.js';
import { findCampaign, type CampaignRow } from '../store/campaigns.js';
import { templateContents } from '../store/templates.js';
import { dueScheduledRun, runProblems, templateIdsOf } from '../domain/campaigns.js';
import type { AudienceConfig } from '../domain/conditions.js';
import { logger } from '../logger.js';
import { groupBy } from '../util/group-by.js';
import { Poller } from '../util/poller.js';
import { enrolPeople } from './enrol.js';
import type { Claimant } from '../store/leases.js';

/** How often live schedule campaigns are looked at: a run starts at most this late. */
const POLL_MS = 1_000;
/** People enrolled per statement. */
const ENROL_PAGE = 2_000;
/** A run still enrolling whose lease was not renewed for this long lapses even though its holder lives. */
const STALE_RUN_MS = 30_000;

export class ScheduleRuns {
  private readonly poller = new Poller(POLL_MS, 'campaign schedules', () => this.tick());
  private stopped = false;
  /** When each dynamic_schedule campaign is next scanned by this actor. */
  private readonly nextScan = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly claimant: Claimant,
    private readonly ceiling: number,
    /** How often, at least, a dynamic_schedule campaign's audience is scanned for people now due. */
    private readonly scanMs: number,
    /** Called after each page enrolled, so the executor starts on it at once. */
    private readonly enrolled: () => void,
  ) {}

  start(): void {
    this.poller.start();
  }

  /** Stops between two pages; a run left unfinished is resumed by the next start (or a replica). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.poller.stop();
  }

  /**
   * Walks the runs due (and those taken over) together, a page of each in turn, so campaigns of
   * several workspaces started at once enrol, and so send, side by side rather than one
   * audience after another; runs coming due meanwhile join at the next round after POLL_MS.
   * The executor is nudged after each round, not each page: nudged after the first run's first
   * page, it sent that workspace's alone until the next run's page was in (a head start of
   * hundreds of sends, most of two workspaces' 4,000 each).
   */
  private async tick(): Promise<void> {
    const walks = await this.dueWalks();
    let looked = Date.now();
    while (walks.length > 0 && !this.stopped) {
      for (const w of [...walks]) {
        if ((await w.next()).done) walks.splice(walks.indexOf(w), 1);
        if (this.stopped) return; // resumed from where each run got by the next start
      }
      this.enrolled();
      if (Date.now() - looked >= POLL_MS) {
        looked = Date.now();
        walks.push(...(await this.dueWalks()));
      }
    }
  }

  /** The walks of the runs this actor takes over or starts now (dynamic schedules are scanned here, not walked). */
  private async dueWalks(): Promise<AsyncGenerator<void, void>[]> {
    const walks: AsyncGenerator<void, void>[] = [];
    for (const lease of await takeOverLapsed(this.db, STALE_RUN_MS, (ws) => this.claimant.owns(ws), this.claimant.instance.id)) {
      const campaign = await findCampaign(this.db, lease.workspace_id, lease.campaign_id);
      if (campaign) walks.push(this.walk(campaign, lease));
    }
    const now = Date.now();
    for (const c of (await liveSchedules(this.db)).filter((x) => this.claimant.owns(x.workspace_id))) {
      if (this.stopped) break;
      if (c.trigger_type === 'dynamic_schedule') {
        if (now >= (this.nextScan.get(c.id) ?? 0)) await this.scan(c);
        continue;
      }
      const run = dueScheduledRun(c.trigger_config, c.live_since, now);
      if (run && (await startRun(this.db, c.workspace_id, c.id, run.key, this.claimant.instance.id))) {
        walks.push(this.walk(c, { campaign_id: c.id, run_key: run.key, workspace_id: c.workspace_id, after_person: null, enrolled: 0 }));
      }
    }
    return walks;
  }

  /** Why the campaign cannot run now, or undefined. */
  private async cannotRun(c: CampaignRow): Promise<string | undefined> {
    const templates = await templateContents(this.db, c.workspace_id, templateIdsOf(c.workflow_definition));
    const problems = runProblems(c, templates);
    return problems.length > 0 ? problems.map((p) => `${p.field} ${p.message}`).join('; ') : undefined;
  }

  /** Enrols a run's audience from where its lease says, a page per step, then finishes it. */
  private async *walk(c: CampaignRow, lease: RunLease): AsyncGenerator<void, void> {
    const oneOff = c.trigger_type === 'schedule' && typeof c.trigger_config.send_at === 'string';
    const problem = await this.cannotRun(c);
    if (problem !== undefined) {
      logger.warn('campaign run cannot start: the campaign fails', { campaign: c.id, run: lease.run_key, problem });
      await finishRun(this.db, c.id, lease.run_key, { state: 'failed', error: problem });
      await setSystemStatus(this.db, c.id, ['scheduled', 'active'], 'failed');
      return;
    }
    const audience = c.audience_config as AudienceConfig;
    let walked = lease.enrolled;
    let after = lease.after_person ?? undefined;
    for await (const page of audiencePages(this.db, c.workspace_id, audience, { pageSize: ENROL_PAGE, limit: this.ceiling - walked, after })) {
      await this.db.tx(async (q) => {
        await enrolPeople(q, c, lease.run_key, page);
        await runProgress(q, c.id, lease.run_key, page[page.length - 1]!, page.length);
      });
      walked += page.length;
      after = page[page.length - 1];
      yield;
    }
    let truncated = false;
    if (walked >= this.ceiling) {
      for await (const more of audiencePages(this.db, c.workspace_id, audience, { pageSize: 1, limit: 1, after })) truncated = more.length > 0;
    }
    if (truncated) logger.warn('campaign run truncated at the audience ceiling', { campaign: c.id, run: lease.run_key, ceiling: this.ceiling });
    await finishRun(this.db, c.id, lease.run_key, { state: 'enrolled', truncated });
    if (oneOff) await setSystemStatus(this.db, c.id, ['scheduled', 'active'], 'completed');
  }

  /** Enrols a dynamic_schedule campaign's people now due, each under their date's run. */
  private async scan(c: LiveSchedule): Promise<void> {
    const trait = String(c.trigger_config.trait ?? '');
    const path = (trait.startsWith('traits.') ? trait.slice('traits.'.length) : trait).split('.');
    const offset = Number(c.trigger_config.offset_minutes ?? 0);
    const audience = c.audience_config as AudienceConfig;
    let after = FIRST_ID;
    let left = this.ceiling;
    let checked = false;
    for (;;) {
      if (left <= 0 || this.stopped) return; // the rest at the next poll
      const due = await dynamicDue(this.db, { workspaceId: c.workspace_id, campaignId: c.id, audience }, path, offset, c.live_since, after, Math.min(ENROL_PAGE, left));
      if (due.length === 0) break;
      if (!checked) {
        const problem = await this.cannotRun(c);
        if (problem !== undefined) {
          logger.warn('dynamic schedule cannot run: the campaign fails', { campaign: c.id, problem });
          await setSystemStatus(this.db, c.id, ['active'], 'failed');
          return;
        }
        checked = true;
      }
      for (const [instant, people] of groupBy(due, (d) => d.instant)) await enrolPeople(this.db, c, `dyn:${instant}`, people.map((d) => d.id));
      this.enrolled();
      left -= due.length;
      after = due[due.length - 1]!.id;
    }
    const next = await dynamicNext(this.db, { workspaceId: c.workspace_id, audience }, path, offset);
    this.nextScan.set(c.id, Math.min(next?.getTime() ?? Infinity, Date.now() + this.scanMs));
  }
}
