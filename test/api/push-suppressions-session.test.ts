// The dashboard's token suppressions (session): GET/POST /workspaces/{id}/push/suppressions and
// DELETE .../{id}, the same suppress and lift as the key routes (README, Request bodies and Routes), listed
// newest first with tokens masked and paged; members only.
import t from 'tap';
import { newWorkspace, uniqueUser, workspaceWithKeys } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { FORBIDDEN, UUID, sessionError } from '../helpers/assert.js';

const s = await sharedServer();
const TOKEN = 'fcm-token-0123456789abcdef';

t.test('suppress, list (masked, newest first, paged), lift; the key routes see the same', async (t) => {
  const { ws, send } = await workspaceWithKeys(s, { send: ['push:send'] });
  const path = `/workspaces/${ws.id}/push/suppressions`;
  const empty = await s.req('GET', path, { token: ws.token });
  t.match(empty.body, { success: true, suppressions: [], total: 0, limit: 50, offset: 0 });

  const a = await s.req('POST', path, { token: ws.token, body: { device_token: TOKEN, platform: 'android', suppression_type: 'opt_out', reason: 'asked by mail' } });
  t.equal(a.status, 201, a.text);
  t.match(a.body, { success: true, id: UUID, device_token: 'fcm-***cdef', already_suppressed: false });
  t.equal((await s.req('POST', path, { token: ws.token, body: { device_token: TOKEN, platform: 'android', suppression_type: 'opt_out' } })).status, 200, 'again: the same one');
  // By key: the same table.
  const b = await s.req('POST', `/workspaces/${ws.id}/push/tokens/suppress`, { token: send, body: { device_token: 'apns-token-0123456789abcdef', platform: 'ios', suppression_type: 'uninstalled' } });
  t.equal(b.status, 201, b.text);

  const list = await s.req('GET', path, { token: ws.token });
  t.equal(list.body.total, 2);
  t.same(list.body.suppressions.map((x: { id: string }) => x.id), [b.body.id, a.body.id], 'newest first');
  t.same(list.body.suppressions[1], { id: a.body.id, device_token: 'fcm-***cdef', platform: 'android', suppression_type: 'opt_out', reason: 'asked by mail', suppressed_at: a.body.suppressed_at });
  const paged = await s.req('GET', `${path}?limit=1&offset=1`, { token: ws.token });
  t.same(paged.body.suppressions.map((x: { id: string }) => x.id), [a.body.id], 'limit and offset');

  t.equal((await s.req('DELETE', `${path}/${a.body.id}`, { token: ws.token })).status, 200);
  sessionError(t, await s.req('DELETE', `${path}/${a.body.id}`, { token: ws.token }), 404, 'NOT_FOUND');
  t.equal((await s.req('GET', path, { token: ws.token })).body.total, 1, 'lifted');
});

t.test('refusals: an unknown type names the field; a non-member, an API key, another workspace', async (t) => {
  const { ws, send } = await workspaceWithKeys(s, { send: ['push:send'] });
  const other = await newWorkspace(s);
  const path = `/workspaces/${ws.id}/push/suppressions`;
  const bad = await s.req('POST', path, { token: ws.token, body: { device_token: TOKEN, platform: 'android', suppression_type: 'bored' } });
  t.equal(bad.status, 400, bad.text);
  t.equal(bad.body.success, false);
  const stranger = await s.req('GET', path, { token: await s.session(uniqueUser('stranger')) });
  t.equal(stranger.status, 403);
  t.same(stranger.body, FORBIDDEN);
  t.equal((await s.req('GET', path, { token: send })).status, 403, 'sessions only');
  const mine = await s.req('POST', path, { token: ws.token, body: { device_token: TOKEN, platform: 'android', suppression_type: 'disabled' } });
  sessionError(t, await s.req('DELETE', `/workspaces/${other.id}/push/suppressions/${mine.body.id}`, { token: other.token }), 404, 'NOT_FOUND');
});

t.test('q: the tokens starting with it, case-sensitive, a token longer than the indexed 64 characters, this workspace only', async (t) => {
  const ws = await newWorkspace(s);
  const other = await newWorkspace(s);
  const path = `/workspaces/${ws.id}/push/suppressions`;
  const long = `${'L'.repeat(70)}-tail-0123456789`;
  const tokens = ['abcd-token-0123456789', 'abce-token-0123456789', 'ABCD-token-0123456789', long, `${'L'.repeat(70)}-other-0123456789`];
  for (const device_token of tokens) {
    const r = await s.req('POST', path, { token: ws.token, body: { device_token, platform: 'android', suppression_type: 'opt_out' } });
    t.equal(r.status, 201, r.text);
  }
  // Another workspace's token of the same prefix is never listed here.
  t.equal((await s.req('POST', `/workspaces/${other.id}/push/suppressions`, { token: other.token, body: { device_token: 'abcd-token-other-999', platform: 'android', suppression_type: 'opt_out' } })).status, 201);

  const search = async (q: string, extra = '') => (await s.req('GET', `${path}?q=${encodeURIComponent(q)}${extra}`, { token: ws.token })).body;
  const abcd = await search('abcd');
  t.equal(abcd.total, 1, 'prefix, case-sensitive');
  t.equal(abcd.suppressions[0].device_token, 'abcd***6789', 'still masked');
  t.equal((await search('abc')).total, 2);
  t.equal((await search('token')).total, 0, 'a prefix, not a substring');
  t.equal((await search('L'.repeat(70))).total, 2, 'past the 64 indexed characters');
  const one = await search(`${'L'.repeat(70)}-tail`);
  t.equal(one.total, 1, 'the whole token is checked');
  t.same((await search('abc', '&limit=1&offset=1')).suppressions.length, 1, 'paged within the matches');
  t.equal((await search('  abcd  ')).total, 1, 'trimmed');
  t.equal((await s.req('GET', `${path}?q=`, { token: ws.token })).status, 400, 'an empty q is refused');
  t.equal((await s.req('GET', `/workspaces/${other.id}/push/suppressions?q=abcd`, { token: other.token })).body.total, 1, 'the other workspace sees its own');
});
