// A campaign's analytics routes (docs/campaign-analytics.md) against a real Herald: a campaign
// sent for real through the email sandbox (one bounce, one complaint, the others delivered), the
// clicks and opens a provider's callbacks (or Herald's link tracking) record on its messages
// written as they would be; then the timeseries, the links and the CSV export, their refusals
// in the documented body, and the workspace boundary on every read.
import t from 'tap';
import pg from 'pg';
import { eventually, newWorkspace, storeUrl, triggerWebhookCampaign, workspaceWithKeys } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';

const s = await sharedServer();
const sql = new pg.Client({ connectionString: storeUrl(s) });
await sql.connect();
t.teardown(() => sql.end());

const k = await workspaceWithKeys(s, { trigger: ['campaigns:trigger'], write: ['people:write'], all: ['*'] }, 'Analytics');
const people = [
  { userId: 'bounce', email: 'bounce@simulator.herald.test' },
  { userId: 'complaint', email: 'complaint@simulator.herald.test' },
  { userId: 'ada', email: 'ada@example.com' },
  // A spreadsheet would run this as a formula; the comma and quote need quoting.
  { userId: '=1+1,"q"', email: 'grace@example.com' },
];
const r = await s.req('POST', '/people/batch', { token: k.write, body: { identify: people } });
if (r.status !== 200) throw new Error(`identify: ${r.status} ${r.text}`);
const campaignId = await triggerWebhookCampaign(s, k.ws, k.trigger, { id: 'mail', type: 'email', subject: 'S', text: 'Hello' });
const base = `/workspaces/${k.ws.id}/campaigns/${campaignId}/analytics`;
const owner = { token: k.ws.token };

// Every message recorded (the sandbox answers at once).
const messages = await eventually(async () => {
  const q = await sql.query<{ id: string; external_id: string; status: string }>('SELECT id, external_id, status FROM messages WHERE campaign_id = $1', [campaignId]);
  return q.rows.length === people.length ? new Map(q.rows.map((m) => [m.external_id, m])) : undefined;
}, 30_000);
if (!messages) throw new Error('the campaign did not send');

// As callbacks record them: ada opened and clicked /a twice and /b once; the other delivered
// person clicked /a; a link scanner (machine: true) clicked /b on the complaint.
const now = new Date().toISOString();
const events = (...e: object[]) => JSON.stringify(e.map((x) => ({ at: now, ...x })));
const click = (url: string, machine = false) => ({ type: 'clicked', ...(machine ? { machine } : {}), details: { url } });
const record = (who: string, json: string) => sql.query('UPDATE messages SET events = events || $2::jsonb WHERE id = $1', [messages.get(who)!.id, json]);
await record('ada', events({ type: 'opened', details: {} }, click('https://example.com/a'), click('https://example.com/a'), click('https://example.com/b')));
await record('=1+1,"q"', events(click('https://example.com/a')));
await record('complaint', events(click('https://example.com/b', true)));

t.test('timeseries: sends, opens and clicks per bucket, every bucket of the range answered', async (t) => {
  const hourly = await s.req('GET', `${base}/timeseries?bucket=hour`, owner);
  t.equal(hourly.status, 200, hourly.text);
  t.equal(hourly.body.points.length, 7 * 24 + 1, 'the 7 days before now, in hours (the first one partial)');
  const sum = (k: 'sent' | 'opened' | 'clicked') => hourly.body.points.reduce((n: number, p: Record<string, number>) => n + p[k]!, 0);
  t.same([sum('sent'), sum('opened'), sum('clicked')], [4, 1, 4], "the machine's click left out");
  const at = hourly.body.points.findLast((p: { sent: number }) => p.sent > 0);
  t.equal(at.at, `${now.slice(0, 13)}:00:00.000Z`, 'in the hour they were sent');
  t.equal(hourly.body.capped, false);

  const from = '2020-01-01T00:00:00Z';
  const daily = await s.req('GET', `${base}/timeseries?bucket=day&from=${from}&to=2020-01-03T00:00:00Z`, owner);
  t.same(daily.body, {
    success: true, bucket: 'day', from: '2020-01-01T00:00:00.000Z', to: '2020-01-03T00:00:00.000Z', capped: false,
    points: [{ at: '2020-01-01T00:00:00.000Z', sent: 0, opened: 0, clicked: 0 }, { at: '2020-01-02T00:00:00.000Z', sent: 0, opened: 0, clicked: 0 }],
  }, 'a range before the campaign: zeros');
});

t.test('bad parameters: 400 VALIDATION_ERROR in the session shape, naming the field', async (t) => {
  const cases: [string, string][] = [
    ['bucket=week', 'bucket'],
    ['from=2024-01-02T00:00:00Z&to=2024-01-01T00:00:00Z', 'to'],
    ['bucket=hour&from=2024-01-01T00:00:00Z&to=2024-02-02T00:00:00Z', 'from'],
    ['bucket=day&from=2020-01-01T00:00:00Z&to=2021-01-02T00:00:01Z', 'from'],
    ['from=yesterday', 'from'],
  ];
  for (const [query, field] of cases) {
    const bad = await s.req('GET', `${base}/timeseries?${query}`, owner);
    t.equal(bad.status, 400, query);
    t.match(bad.body, { success: false, error: { code: 'VALIDATION_ERROR', message: String, details: [{ field }] } }, query);
  }
  const limit = await s.req('GET', `${base}/links?limit=-1`, owner);
  t.match(limit.body, { success: false, error: { code: 'VALIDATION_ERROR', details: [{ field: 'limit' }] } });
  const page = await s.req('GET', `${base}/export?before_id=${campaignId}`, owner);
  t.match(page.body, { success: false, error: { code: 'VALIDATION_ERROR', details: [{ field: 'before_id' }] } });
});

t.test('the edges of what is accepted answer 200', async (t) => {
  const early = await s.req('GET', `${base}/timeseries?to=1970-01-05T00:00:00Z`, owner);
  t.match(early.body, { from: '1969-12-06T00:00:00.000Z', points: Array }, 'the default span may start before 1970');
  t.equal(early.body.points.length, 30);
  const late = await s.req('GET', `${base}/timeseries?bucket=hour&from=2106-02-07T00:00:00Z&to=2106-02-07T06:28:15.999Z`, owner);
  t.equal(late.body.points.length, 7, 'the last instant a timestamp may name');
  const most = await s.req('GET', `${base}/links?limit=2147483647`, owner);
  t.equal(most.body.limit, 100, 'limit reduced to its maximum');
  const none = await s.req('GET', `${base}/export?limit=0`, owner);
  t.equal(none.text, 'message_id,external_id,channel,status,sent_at,delivered,opened,clicked,error\r\n', 'limit 0: the header row alone');
  t.equal(none.headers.get('link'), null);
});

t.test('links: the most clicked first, clicks and unique clicks (machines left out of unique)', async (t) => {
  const links = await s.req('GET', `${base}/links`, owner);
  t.equal(links.status, 200, links.text);
  t.same(links.body, {
    success: true, total: 2, limit: 20, capped: false,
    links: [{ url: 'https://example.com/a', clicks: 3, unique_clicks: 2 }, { url: 'https://example.com/b', clicks: 2, unique_clicks: 1 }],
  });
  const top = await s.req('GET', `${base}/links?limit=1`, owner);
  t.same(top.body.links.map((l: { url: string }) => l.url), ['https://example.com/a']);
  t.equal(top.body.total, 2, 'total counts every URL');
});

t.test('the CSV export: one row per message, flags, quoting, formula cells defused, paged with Link', async (t) => {
  const all = await s.req('GET', `${base}/export`, owner);
  t.equal(all.status, 200);
  t.match(all.headers.get('content-type'), /^text\/csv/);
  t.equal(all.headers.get('content-disposition'), `attachment; filename="campaign-${campaignId}.csv"`);
  t.equal(all.headers.get('link'), null, 'one page holds them all');
  const lines = all.text.split('\r\n');
  t.equal(lines[0], 'message_id,external_id,channel,status,sent_at,delivered,opened,clicked,error');
  t.equal(lines.length, 6, 'the header, 4 rows, and the last CRLF');
  const row = (who: string) => lines.find((l) => l.startsWith(`${messages.get(who)!.id},`))!;
  t.match(row('ada'), /^[0-9a-f-]{36},ada,email,delivered,\d{4}-\d\d-\d\dT[\d:.]+Z,true,true,true,$/);
  t.match(row('bounce'), /,bounce,email,bounced,[^,]+,false,false,false,/);
  t.match(row('complaint'), /,complaint,email,complained,[^,]+,true,false,true,/);
  t.match(row('=1+1,"q"'), /^[0-9a-f-]{36},"'=1\+1,""q""",email,delivered,/);

  const seen: string[] = [];
  let next: string | null = `${base}/export?limit=3`;
  while (next) {
    const page = await s.req('GET', next, owner);
    seen.push(...page.text.split('\r\n').slice(1, -1));
    const link = page.headers.get('link');
    next = link && `${base}/export${/^<([^>]+)>; rel="next"$/.exec(link)![1]}`;
  }
  t.same(seen.sort(), lines.slice(1, -1).sort(), 'the pages together are the whole export, each row once');
});

t.test('the workspace boundary: another member is refused, another workspace finds nothing, a key is refused', async (t) => {
  const other = await newWorkspace(s, 'Other');
  for (const path of ['timeseries', 'links', 'export']) {
    const foreign = await s.req('GET', `${base}/${path}`, { token: other.token });
    t.equal(foreign.status, 403, `${path}: not a member`);
    const elsewhere = await s.req('GET', `/workspaces/${other.id}/campaigns/${campaignId}/analytics/${path}`, { token: other.token });
    t.equal(elsewhere.status, 404, `${path}: another workspace's campaign`);
    t.match(elsewhere.body, { success: false, error: { code: 'NOT_FOUND' } });
    const unknown = await s.req('GET', `/workspaces/${k.ws.id}/campaigns/not-a-uuid/analytics/${path}`, owner);
    t.equal(unknown.status, 404, `${path}: no such campaign`);
    const key = await s.req('GET', `${base}/${path}`, { token: k.all });
    t.equal(key.status, 403, `${path}: an API key on a session route`);
  }
});
