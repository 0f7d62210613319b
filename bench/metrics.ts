// Reading Herald's GET /metrics (Prometheus text format): the samples of a scrape, sums over
// them, and the short summary the bench prints beside its own figures. The API tests read
// scrapes with the same parser.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** GET /metrics of the Herald at `base`; null when it serves none (metrics off, or on a port of their own). */
export async function scrapeMetrics(base: string): Promise<string | null> {
  try {
    const r = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(10_000) });
    return r.ok ? await r.text() : null;
  } catch {
    return null;
  }
}

/** The samples of a scrape (comments and blank lines skipped; label values unescaped). */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (!m || line.startsWith('#')) continue;
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(LABEL)) labels[k!] = v!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The families a scrape describes (its `# TYPE` lines), by name. */
export function families(text: string): Set<string> {
  return new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function sum(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((n, s) => n + s.value, 0);
}

/** `after` − `before` of every series of `name` (counters across a run), as samples. */
function delta(before: readonly Sample[], after: readonly Sample[], name: string): Sample[] {
  const key = (s: Sample) => JSON.stringify(s.labels);
  const was = new Map(before.filter((s) => s.name === name).map((s) => [key(s), s.value]));
  return after.filter((s) => s.name === name).map((s) => ({ ...s, value: s.value - (was.get(key(s)) ?? 0) }));
}

/** The run's figures from two scrapes of Herald (at the start and the end of the measured load). */
export interface MetricsSummary {
  /** Requests answered, by status. */
  requests_by_status: Record<string, number>;
  /** Mean appends per Log write (the group-commit group size); null without appends. */
  log_group_mean: number | null;
  log_events: number;
  /** Per JetStream sink: its lag (seconds) and pending messages at the end. */
  sinks: Record<string, { lag_s: number; pending: number }>;
  /** Device sends by provider/outcome. */
  provider_outcomes: Record<string, number>;
  messages_by_status: Record<string, number>;
  campaign_enrolments: number;
  campaign_sends_by_status: Record<string, number>;
  rate_limit_refusals: number;
  /** Event-loop delay p99 and max per thread, since the scrape before (the start of the load). */
  eventloop_ms: Record<string, { p99: number; max: number }>;
}

const byLabel = (samples: Sample[], label: (s: Sample) => string): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const s of samples) if (s.value !== 0) out[label(s)] = (out[label(s)] ?? 0) + s.value;
  return out;
};

const ms = (seconds: number) => Math.round(seconds * 10_000) / 10;

export function summarize(beforeText: string, afterText: string): MetricsSummary {
  const before = parseMetrics(beforeText);
  const after = parseMetrics(afterText);
  const d = (name: string) => delta(before, after, name);
  const appends = sum(d('herald_log_group_appends_sum'), 'herald_log_group_appends_sum');
  const writes = sum(d('herald_log_group_appends_count'), 'herald_log_group_appends_count');
  const sinks: MetricsSummary['sinks'] = {};
  for (const s of after.filter((x) => x.name === 'herald_sink_lag_seconds')) {
    const sink = s.labels.sink!;
    sinks[sink] = { lag_s: s.value, pending: sum(after, 'herald_sink_pending_messages', { sink }) };
  }
  const eventloop: MetricsSummary['eventloop_ms'] = {};
  for (const s of after.filter((x) => x.name === 'herald_eventloop_lag_seconds')) {
    const t = (eventloop[s.labels.thread!] ??= { p99: 0, max: 0 });
    if (s.labels.quantile === '0.99') t.p99 = ms(s.value);
    if (s.labels.quantile === '1') t.max = ms(s.value);
  }
  return {
    requests_by_status: byLabel(d('herald_http_request_duration_seconds_count'), (s) => s.labels.status!),
    log_group_mean: writes > 0 ? Math.round((appends / writes) * 10) / 10 : null,
    log_events: sum(d('herald_log_events_total'), 'herald_log_events_total'),
    sinks,
    provider_outcomes: byLabel(d('herald_provider_request_duration_seconds_count'), (s) => `${s.labels.provider}/${s.labels.outcome}`),
    messages_by_status: byLabel(d('herald_messages_total'), (s) => `${s.labels.channel}/${s.labels.status}`),
    campaign_enrolments: sum(d('herald_campaign_enrolments_total'), 'herald_campaign_enrolments_total'),
    campaign_sends_by_status: byLabel(d('herald_campaign_sends_total'), (s) => s.labels.status!),
    rate_limit_refusals: sum(d('herald_rate_limit_refusals_total'), 'herald_rate_limit_refusals_total'),
    eventloop_ms: eventloop,
  };
}

/** The summary as a few lines of text. */
export function formatSummary(m: MetricsSummary): string {
  const kv = (o: Record<string, number | string>) => Object.entries(o).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';
  const lines = [
    `  requests by status: ${kv(m.requests_by_status)}`,
    `  Log: ${m.log_events} events, group size mean ${m.log_group_mean ?? '-'} appends per write`,
  ];
  for (const [sink, s] of Object.entries(m.sinks)) lines.push(`  sink ${sink}: lag ${s.lag_s} s, ${s.pending} messages pending`);
  if (Object.keys(m.provider_outcomes).length > 0) lines.push(`  provider sends: ${kv(m.provider_outcomes)}`);
  if (Object.keys(m.messages_by_status).length > 0) lines.push(`  messages: ${kv(m.messages_by_status)}`);
  if (m.campaign_enrolments > 0 || Object.keys(m.campaign_sends_by_status).length > 0) lines.push(`  campaigns: ${m.campaign_enrolments} enrolled; sends ${kv(m.campaign_sends_by_status)}`);
  if (m.rate_limit_refusals > 0) lines.push(`  rate-limit refusals: ${m.rate_limit_refusals}`);
  lines.push(`  event-loop delay p99/max (ms): ${kv(Object.fromEntries(Object.entries(m.eventloop_ms).map(([t, v]) => [t, `${v.p99}/${v.max}`])))}`);
  return lines.join('\n');
}
