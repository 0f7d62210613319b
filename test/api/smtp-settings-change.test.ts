// The email channel's SMTP settings changed while a campaign sends through them: the sends
// already with the old relay's pool finish there, the later ones go through the new settings,
// and every person ends with exactly one `sent` record and one message (two real smtp-server
// relays; before, the change closed the old pool under its queued sends: "Connection pool was
// closed", recorded failed and never retried).
import t from 'tap';
import pg from 'pg';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { ownDatabase } from '../helpers/database.js';
import { eventually, startServer, storeUrl, triggerWebhookCampaign, workspaceWithKeys } from '../helpers/server.js';

t.setTimeout(180_000);

const N = 300;

/** A relay that takes every message, answering its DATA after a few milliseconds; what it got, by recipient. */
async function relay(): Promise<{ port: number; got: string[] }> {
  const got: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, cb) {
      stream.resume();
      stream.on('end', () => {
        got.push(...session.envelope.rcptTo.map((r) => r.address));
        setTimeout(cb, 30);
      });
    },
  });
  server.on('error', () => {});
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { port: (server.server.address() as AddressInfo).port, got };
}

const first = await relay();
const second = await relay();
const DB = await ownDatabase(t);
const s = await startServer(DB);
t.teardown(() => s.stop());
const sql = new pg.Client({ connectionString: storeUrl(s, DB) });
await sql.connect();
t.teardown(() => sql.end());

t.test(`SMTP settings changed mid-campaign: each of ${N} people gets one sent record and one message`, async (t) => {
  const k = await workspaceWithKeys(s, { trigger: ['campaigns:trigger'], write: ['people:write'] });
  const channel = (port: number) => s.req('PUT', `/workspaces/${k.ws.id}/channels/email`, { token: k.ws.token, body: { smtp: { host: '127.0.0.1', port, security: 'none', max_connections: 3 }, from: { email: 'news@herald.example' } } });
  t.equal((await channel(first.port)).status, 200);
  const people = Array.from({ length: N }, (_, i) => ({ userId: `p${i}`, email: `p${i}@example.com` }));
  t.equal((await s.req('POST', '/people/batch', { token: k.write, body: { identify: people } })).status, 200);
  const campaignId = await triggerWebhookCampaign(s, k.ws, k.trigger, { id: 'mail', type: 'email', subject: 'S', text: 'T' });

  t.ok(await eventually(async () => first.got.length >= 40, 60_000), 'the first relay is taking the campaign');
  const changed = await channel(second.port);
  t.equal(changed.status, 200, changed.text);
  t.comment(`settings changed after ${first.got.length} of ${N} messages`);

  const rows = await eventually(async () => {
    const r = await sql.query<{ address: string; status: string; error: string | null }>('SELECT address, status, error FROM messages WHERE campaign_id = $1', [campaignId]);
    return r.rows.length === N ? r.rows : null;
  }, 90_000);
  if (!rows) return t.fail(`${N} records`);
  const notSent = rows.filter((r) => r.status !== 'sent');
  t.same(notSent, [], 'every record is sent');
  t.equal(new Set(rows.map((r) => r.address)).size, N, 'one record per person');
  const delivered = [...first.got, ...second.got];
  t.equal(delivered.length, N, `one message per person (${first.got.length} through the first relay, ${second.got.length} through the second)`);
  t.equal(new Set(delivered).size, N, 'nobody twice');
  t.ok(second.got.length > 0, 'the later sends went through the new settings');
});
