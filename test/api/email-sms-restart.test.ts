// Email and SMS sends interrupted by a kill -9 (docs/channels.md, docs/campaigns-runtime.md): a send
// that was with the SMTP relay or Twilio at the kill is not made again after the restart (the
// provider may have it); it is recorded `failed` as interrupted, on its own channel. The relay
// and Twilio here take the message and never answer, so the kill finds both sends in flight.
import t from 'tap';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { SMTPServer } from 'smtp-server';
import { ownDatabase } from '../helpers/database.js';
import { eventually, serversOnOneDir, storeUrl, workspaceWithKeys } from '../helpers/server.js';

t.setTimeout(180_000);

// An SMTP relay that takes the envelope and never answers RCPT TO.
let rcpts = 0;
const smtp = new SMTPServer({ authOptional: true, disabledCommands: ['STARTTLS'], closeTimeout: 1000, onRcptTo: () => void rcpts++ });
// The kill resets Herald's connection (RST when it had unread data): a connection's error, not the relay's.
smtp.on('error', () => {});
await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
t.teardown(() => new Promise<void>((r) => smtp.close(() => r())));
const smtpPort = (smtp.server.address() as { port: number }).port;

// A Twilio that takes the request and never answers.
const twilioRequests: IncomingMessage[] = [];
const twilio = createServer((req) => void twilioRequests.push(req));
await new Promise<void>((r) => twilio.listen(0, '127.0.0.1', r));
t.teardown(() => {
  twilio.closeAllConnections();
  return new Promise<void>((r) => twilio.close(() => r()));
});
const SID = `AC${'cd'.repeat(16)}`;

const DB = await ownDatabase(t);
const servers = await serversOnOneDir(t, { ...DB, HERALD_SECRETS_KEY: randomBytes(32).toString('hex'), HERALD_TWILIO_ENDPOINT: `http://127.0.0.1:${(twilio.address() as { port: number }).port}` }, 'channel-kill');

t.test('an email and an SMS with their provider at a kill -9 are recorded failed as interrupted, on their own channel', async (t) => {
  const first = servers.first;
  const k = await workspaceWithKeys(first, { trigger: ['campaigns:trigger'], write: ['people:write'] });
  const hdr = { token: k.ws.token, headers: { 'x-workspace-id': k.ws.id } };
  const email = await first.req('PUT', `/workspaces/${k.ws.id}/channels/email`, { token: k.ws.token, body: { smtp: { host: '127.0.0.1', port: smtpPort, security: 'none' }, from: { email: 'news@herald.example' } } });
  t.equal(email.status, 200, email.text);
  const sms = await first.req('PUT', `/workspaces/${k.ws.id}/channels/sms`, { token: k.ws.token, body: { twilio: { account_sid: SID, auth_token: 'tw-token', from: '+15005550006' } } });
  t.equal(sms.status, 200, sms.text);
  t.equal((await first.req('POST', '/people/batch', { token: k.write, body: { identify: [{ userId: 'kill', email: 'kill@example.com', phone: '+15017122661' }] } })).status, 200);
  const campaign = async (node: object) => {
    const c = await first.req('POST', '/campaigns', { ...hdr, body: { name: 'Kill', trigger_type: 'webhook', trigger_config: {}, workflow_definition: { nodes: [node] } } });
    t.equal(c.status, 201, c.text);
    const id = c.body.data.campaign.id as string;
    t.equal((await first.req('PUT', `/campaigns/${id}`, { ...hdr, body: { status: 'active' } })).status, 200);
    t.equal((await first.req('POST', `/campaigns/${id}/trigger`, { token: k.trigger, body: { workspace_id: k.ws.id } })).status, 202);
    return id;
  };
  const mailCampaign = await campaign({ id: 'mail', type: 'email', subject: 'S', text: 'T' });
  const smsCampaign = await campaign({ id: 'text', type: 'sms', body: 'B' });
  await eventually(async () => rcpts >= 1 && twilioRequests.length >= 1, 30_000);
  await first.stop('SIGKILL');

  const again = await servers.again();
  const sql = new pg.Client({ connectionString: storeUrl(again, DB) });
  await sql.connect();
  t.teardown(() => sql.end());
  const rows = await eventually(async () => {
    const r = await sql.query('SELECT campaign_id, channel, status, error FROM messages WHERE campaign_id = ANY ($1)', [[mailCampaign, smsCampaign]]);
    return r.rows.length === 2 ? r.rows : null;
  }, 90_000);
  if (!rows) return t.fail('both sends recorded after the restart');
  const byCampaign = new Map(rows.map((r) => [r.campaign_id, r]));
  t.match(byCampaign.get(mailCampaign), { channel: 'email', status: 'failed', error: /Interrupted while sending/ });
  t.match(byCampaign.get(smsCampaign), { channel: 'sms', status: 'failed', error: /Interrupted while sending/ });
  t.equal(rcpts, 1, 'the email was not given to the relay again');
  t.equal(twilioRequests.length, 1, 'nor the SMS to Twilio');
});
