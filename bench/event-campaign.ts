// `--event-campaign`: one active event campaign in each workspace before the load (set up over
// the dashboard routes, not timed), so the track scenarios measure what event triggers add:
//   match  listens to every event name the load sends: each event enrols its person;
//   first  the same with first_occurrence: each event claims the first-seen record;
//   other  listens to a name the load never sends: the index lookup alone.
import { call } from './procs.js';
import { EVENT_NAMES, type BenchWorkspace } from './scenarios.js';

export const EVENT_CAMPAIGNS = ['none', 'match', 'first', 'other'] as const;
export type EventCampaign = (typeof EVENT_CAMPAIGNS)[number];

export async function setupEventCampaigns(base: string, token: string, workspaces: BenchWorkspace[], kind: Exclude<EventCampaign, 'none'>): Promise<void> {
  const trigger_config = kind === 'other' ? { event_names: ['bench_never_sent'] } : { event_names: [...EVENT_NAMES], ...(kind === 'first' ? { first_occurrence: true } : {}) };
  for (const ws of workspaces) {
    const headers = { 'X-Workspace-ID': ws.id };
    const c = await call(base, 'POST', '/api/v1/campaigns', token, {
      name: `bench ${kind}`,
      trigger_type: 'event',
      trigger_config,
      workflow_definition: { nodes: [{ id: 'thanks', type: 'push', title: 'Thanks', body: 'You did {{ event.plan | default: "something" }}' }] },
    }, headers);
    const id = c.body?.data?.campaign?.id as string | undefined;
    if (c.status !== 201 || !id) throw new Error(`creating an event campaign answered ${c.status}: ${JSON.stringify(c.body).slice(0, 300)}`);
    const a = await call(base, 'PUT', `/api/v1/campaigns/${id}`, token, { status: 'active' }, headers);
    if (a.status !== 200) throw new Error(`activating the event campaign answered ${a.status}: ${JSON.stringify(a.body).slice(0, 300)}`);
  }
}
