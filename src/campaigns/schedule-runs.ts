// The schedule runner (docs/campaigns-runtime.md; README, Routes): enrols the audiences of `schedule` and
// `dynamic_schedule` campaigns of the workspaces this actor owns; the executor then runs the
// workflows. Everything it knows is in PostgreSQL, so it survives restarts, and each run is
// started once whatever the number of replicas: a run's row in campaign_runs is inserted with
// ON CONFLICT DO NOTHING.
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
// A run is a job (store/campaign-runs.ts RUN_JOBS) in the job loop (jobs/worker.ts): each claim
// walks one keyset page of ENROL_PAGE of its audience, the page's enrolments and the run's
// progress written in one transaction, and the run waits again for its next page. So the runs of
// several workspaces started at once (WALKS_AT_ONCE at a time, a page a turn) enrol, and so
// send, side by side; a run whose claim lapsed (its holder gone, or not renewed) resumes after
// the last page written. At most HERALD_SCHEDULE_AUDIENCE_CEILING people per run: the rest is not enrolled
// and the run records `truncated` (and logs a warning).
import type { Db } from '../store/db.js';
import { audiencePages, FIRST_ID } from '../store/audience.js';
import { dynamicDue, dynamicNext, finishRun, liveSchedules, RUN_JOBS, runProgress, setSystemStatus, startRun, type LiveSchedule, type RunJob } from '../store/campaign-runs.js';
import { findCampaign, type CampaignRow } from '../store/campaigns.js';
import { templateContents } from '../store/templates.js';
import { dueScheduledRun, runProblems, templateIdsOf } from '../domain/campaigns.js';
import type { AudienceConfig } from '../domain/conditions.js';
import { logger } from '../logger.js';
import { groupBy } from '../util/group-by.js';
import { Poller } from '../util/poller.js';
import { JobWorker } from '../jobs/worker.js';
import { enrolPeople } from './enrol.js';
import type { Claimant } from '../store/leases.js';

/** How often live schedule campaigns are looked at: a run starts at most this late. */
const POLL_MS = 1_000;
/** People enrolled per statement (a run's page). */
const ENROL_PAGE = 2_000;
/** Runs (of as many workspaces) walking a page at once. */
const WALKS_AT_ONCE = 4;

export class ScheduleRuns {
  private readonly poller = new Poller(POLL_MS, 'campaign schedules', () => this.tick());
  private readonly walks: JobWorker<RunJob>;
  private stopped = false;
  /** When each dynamic_schedule campaign is next scanned by this actor. */
  private readonly nextScan = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly claimant: Claimant,
    private readonly ceiling: number,
    /** How often, at least, a dynamic_schedule campaign's audience is scanned for people now due. */
    private readonly scanMs: number,
    /** Called when people were enrolled, so the executor starts on them at once. */
    private readonly enrolled: () => void,
  ) {
    // A page of each of WALKS_AT_ONCE workspaces' runs at once, the rest in turn. The executor is
    // nudged after each round, not each page: nudged after the first run's first page, it sent
    // that workspace's alone until the next run's page was in (a head start of hundreds of
    // sends, most of two workspaces' 4,000 each in the two-workspace test); walked one after the
    // other, the first page was in a page's time before the second, for the executor's own look
    // to find alone.
    this.walks = new JobWorker(db, claimant, {
      table: RUN_JOBS,
      page: 1,
      workspacePages: 1,
      pagesInFlight: WALKS_AT_ONCE,
      pollMs: POLL_MS,
      run: async (_ws, [run]) => this.walkPage(run!),
      afterRound: enrolled,
    });
  }

  start(): void {
    this.walks.start();
    this.poller.start();
  }

  /** Stops between two pages; a run left unfinished is resumed by the next start (or a replica). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.poller.stop();
    await this.walks.stop();
  }

  /** Starts the runs now due and scans the dynamic schedules due a scan. */
  private async tick(): Promise<void> {
    const now = Date.now();
    let started = false;
    for (const c of await liveSchedules(this.db, this.claimant.shard)) {
      if (this.stopped) break;
      if (c.trigger_type === 'dynamic_schedule') {
        if (now >= (this.nextScan.get(c.id) ?? 0)) await this.scan(c);
        continue;
      }
      const run = dueScheduledRun(c.trigger_config, c.live_since, now);
      if (run && (await startRun(this.db, c.workspace_id, c.id, run.key))) started = true;
    }
    if (started) this.walks.nudge();
  }

  /** Why the campaign cannot run now, or undefined. */
  private async cannotRun(c: CampaignRow): Promise<string | undefined> {
    const templates = await templateContents(this.db, c.workspace_id, templateIdsOf(c.workflow_definition));
    const problems = runProblems(c, templates);
    return problems.length > 0 ? problems.map((p) => `${p.field} ${p.message}`).join('; ') : undefined;
  }

  /** Enrols the run's next page (the first checks the campaign can run); the last page finishes it. */
  private async walkPage(run: RunJob): Promise<void> {
    const c = await findCampaign(this.db, run.workspace_id, run.campaign_id);
    if (!c) return; // deleted since the claim, its runs with it
    if (run.after_person === null) {
      const problem = await this.cannotRun(c);
      if (problem !== undefined) {
        logger.warn('campaign run cannot start: the campaign fails', { campaign: c.id, run: run.run_key, problem });
        await finishRun(this.db, run.id, { state: 'failed', error: problem });
        await setSystemStatus(this.db, c.id, ['scheduled', 'active'], 'failed');
        return;
      }
    }
    const audience = c.audience_config as AudienceConfig;
    const size = Math.min(ENROL_PAGE, this.ceiling - run.enrolled);
    let page: string[] = [];
    if (size > 0) for await (const p of audiencePages(this.db, c.workspace_id, audience, { pageSize: size, limit: size, after: run.after_person ?? undefined })) page = p;
    const after = page.at(-1) ?? run.after_person;
    const walked = run.enrolled + page.length;
    const last = page.length < size || walked >= this.ceiling;
    let truncated = false;
    if (last && walked >= this.ceiling) {
      for await (const more of audiencePages(this.db, c.workspace_id, audience, { pageSize: 1, limit: 1, after: after ?? undefined })) truncated = more.length > 0;
    }
    await this.db.tx(async (q) => {
      if (page.length > 0) await enrolPeople(q, c, run.run_key, page);
      if (!last) await runProgress(q, run.id, after!, page.length);
      else await finishRun(q, run.id, { state: 'enrolled', truncated, progress: { after, walked: page.length } });
    });
    if (!last) return;
    if (truncated) logger.warn('campaign run truncated at the audience ceiling', { campaign: c.id, run: run.run_key, ceiling: this.ceiling });
    if (c.trigger_type === 'schedule' && typeof c.trigger_config.send_at === 'string') await setSystemStatus(this.db, c.id, ['scheduled', 'active'], 'completed');
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
