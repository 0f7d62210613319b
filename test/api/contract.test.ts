// Answers the rest of the suite reaches rarely or not at all, each held to the OpenAPI
// document by the request helper (test/helpers/contract.ts): the top-level rules (unknown
// path, wrong method, preflight), a body on a GET route, the notImplemented routes of each
// kind, the workspace settings echo, and the answers that are not JSON.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import twilio from 'twilio';
import { newWorkspace, workspaceWithKeys } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { FORBIDDEN } from '../helpers/assert.js';

const s = await sharedServer();
const { ws, all, people } = await workspaceWithKeys(s, { all: ['*'], people: ['people:read'] }, 'Contract');

t.test('paths and methods no operation has', async (t) => {
  const unknown = await s.req('GET', '/people/a/b/c/d/e', { token: all });
  t.equal(unknown.status, 404);
  t.equal(unknown.body?.code, 'NOT_FOUND');
  const badEscape = await s.req('GET', '/people/%E0%A4%A', { token: all });
  t.equal(badEscape.status, 404, 'a path parameter that does not decode matches no route');
  const head = await s.req('HEAD', '/healthz');
  t.equal(head.status, 404, '/healthz answers GET only');

  const options = await s.req('OPTIONS', '/people/someone', { token: all });
  t.equal(options.status, 405, 'no preflight where no route is for browsers');
  t.equal(options.body?.code, 'METHOD_NOT_ALLOWED');
  const preflight = await s.req('OPTIONS', '/people/someone/devices', { headers: { origin: 'https://app.example.com', 'access-control-request-method': 'DELETE' } });
  t.equal(preflight.status, 204);
  t.equal(preflight.text, '');
  t.equal(preflight.headers.get('access-control-allow-methods'), 'POST, GET, DELETE, OPTIONS');

  const flat = await s.req('GET', `/campaigns/${randomUUID()}/trigger`, { token: all });
  t.equal(flat.status, 405, 'the trigger path, another method');
  t.same(Object.keys(flat.body ?? {}), ['error'], 'in the flat shape of the trigger');
});

t.test('a body on a route that takes none is still parsed: malformed JSON is 400', async (t) => {
  const r = await s.req('DELETE', '/people/someone', { token: all, raw: '{', headers: { 'content-type': 'application/json' } });
  t.equal(r.status, 400);
  t.equal(r.body?.error, 'Bad Request');
  const d = await s.req('DELETE', `/workspaces/${ws.id}/members/someone`, { token: ws.token, raw: '{', headers: { 'content-type': 'application/json' } });
  t.equal(d.status, 400);
  t.equal(d.body?.error?.code, 'VALIDATION_ERROR');
});

t.test('routes not served: 501 after auth and access; the trigger answers in its flat shape', async (t) => {
  const push = await s.req('GET', `/workspaces/${ws.id}/push/history`, { token: all });
  t.equal(push.status, 501);
  t.equal(push.body?.code, 'NOT_IMPLEMENTED');
  t.same(await s.req('GET', `/workspaces/${randomUUID()}/push/history`, { token: all }).then((r) => r.body), FORBIDDEN, "another workspace's push route");

  const trigger = await s.req('POST', `/campaigns/${randomUUID()}/trigger`, { token: all, body: { workspace_id: ws.id } });
  t.equal(trigger.status, 404, 'the trigger is served: an unknown campaign');
  t.same(Object.keys(trigger.body ?? {}), ['error'], 'flat {error}');
  const denied = await s.req('POST', `/campaigns/${randomUUID()}/trigger`, { token: people, body: { workspace_id: ws.id } });
  t.equal(denied.status, 403);
  t.same(Object.keys(denied.body ?? {}), ['error'], 'flat {error}');

  const noHeader = await s.req('GET', '/campaigns', { token: ws.token });
  t.equal(noHeader.status, 400, 'no X-Workspace-ID');
  t.equal(noHeader.body?.error?.code, 'VALIDATION_ERROR');
  const stranger = await s.req('GET', '/campaigns', { token: ws.token, headers: { 'x-workspace-id': randomUUID() } });
  t.same(stranger.body, FORBIDDEN, 'a workspace the caller is not a member of');
  const listed = await s.req('GET', '/campaigns', { token: ws.token, headers: { 'x-workspace-id': ws.id } });
  t.equal(listed.status, 200, 'served: the header names a workspace of the caller');
});

t.test('workspace settings: keys beyond timezone and send_policy are refused (400), nothing saved', async (t) => {
  const w = await newWorkspace(s, 'Settings');
  const r = await s.req('PUT', `/workspaces/${w.id}`, { token: w.token, body: { settings: { locale_hint: 'fr' } } });
  t.equal(r.status, 400);
  t.equal(r.body?.error?.code, 'VALIDATION_ERROR');
  t.same(r.body?.error?.details, [{ field: 'settings.locale_hint', message: 'is not a known field' }]);
  const got = await s.req('GET', `/workspaces/${w.id}`, { token: w.token });
  t.same(got.body?.data?.workspace?.settings, { timezone: 'UTC', send_policy: null, tracking: { opens: true, clicks: true } });
});

t.test('path parameters holding U+0000 on a session route: 400', async (t) => {
  const r = await s.req('DELETE', `/workspaces/${ws.id}/members/a%00b`, { token: ws.token });
  t.equal(r.status, 400);
  t.equal(r.body?.error?.code, 'VALIDATION_ERROR');
});

t.test('answers that are not JSON are held to their documented media types: the unsubscribe pages, TwiML', async (t) => {
  const bad = `${s.base}/u/${'A'.repeat(86)}`;
  for (const method of ['GET', 'POST']) {
    const page = await s.req(method, bad);
    t.equal(page.status, 404, `${method} a bad unsubscribe token: 404`);
    t.match(page.headers.get('content-type'), /^text\/html/, 'an HTML page');
  }
  const token = 'tw-contract-token';
  const put = await s.req('PUT', `/workspaces/${ws.id}/channels/sms`, { token: ws.token, body: { twilio: { account_sid: `AC${'0'.repeat(32)}`, auth_token: token, from: '+15005550006' } } });
  t.equal(put.status, 200, put.text);
  const url: string = put.body.data.sms.inbound_url;
  const form = { MessageSid: 'SMcontract', From: '+15005550001', To: '+15005550006', Body: 'hello' };
  const inbound = await s.req('POST', `${s.base}${new URL(url).pathname}`, {
    raw: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilio.getExpectedTwilioSignature(token, url, form) },
  });
  t.equal(inbound.status, 200, inbound.text);
  t.match(inbound.headers.get('content-type'), /^text\/xml/, 'TwiML');
});
