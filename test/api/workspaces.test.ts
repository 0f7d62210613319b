// Workspaces, settings, send policy validation and membership (README,
// Sessions and the Default workspace, Request bodies and Errors). Every user here is fresh, so a shared database does not matter.
import t, { type Test } from 'tap';
import { newWorkspace, newKey, uniqueUser, type Res } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';

const s = await sharedServer();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const FORBIDDEN = { error: 'Forbidden', message: 'Insufficient permissions' };

type T = Test;

/** The session-route error shape (README, Errors) with `code`. */
function sessionError(t: T, r: Res, status: number, code: string): void {
  t.equal(r.status, status, `status ${status} (got ${r.status}: ${r.text})`);
  t.equal(r.body?.success, false, 'success:false');
  t.equal(r.body?.error?.code, code, `error.code ${code}`);
  t.type(r.body?.error?.message, 'string', 'error.message is a string');
  t.ok(r.body?.error && 'details' in r.body.error, 'error.details present');
}

function forbidden(t: T, r: Res, what: string): void {
  t.equal(r.status, 403, `${what}: 403 (got ${r.status}: ${r.text})`);
  t.same(r.body, FORBIDDEN, `${what}: exact 403 body`);
  t.strictSame(Object.keys(r.body ?? {}).sort(), ['error', 'message'], `${what}: no other fields`);
}

function checkWorkspace(t: T, w: unknown, name: string): void {
  const ws = w as Record<string, unknown>;
  t.strictSame(Object.keys(ws).sort(), ['created_at', 'id', 'name', 'settings', 'updated_at'], 'workspace fields');
  t.match(ws.id, UUID, 'id is a UUID');
  t.equal(ws.name, name, 'name');
  t.match(ws.created_at, ISO_MS, 'created_at ISO 8601 UTC with ms');
  t.match(ws.updated_at, ISO_MS, 'updated_at ISO 8601 UTC with ms');
  const settings = ws.settings as Record<string, unknown>;
  t.type(settings, 'object', 'settings is an object');
  t.ok('timezone' in settings, 'settings.timezone present');
  t.ok('send_policy' in settings, 'settings.send_policy present');
}

async function create(token: string, name: string): Promise<Res> {
  return s.req('POST', '/workspaces', { token, body: { name } });
}

t.test('POST /workspaces creates a workspace; the caller becomes its owner', async (t) => {
  const user = uniqueUser('creator');
  const token = await s.session(user);
  const r = await create(token, 'Acme Inc');
  t.equal(r.status, 201, r.text);
  t.equal(r.body.success, true);
  t.strictSame(Object.keys(r.body.data), ['workspace']);
  const w = r.body.data.workspace;
  checkWorkspace(t, w, 'Acme Inc');
  t.equal(w.settings.timezone, 'UTC', 'default timezone UTC');
  t.equal(w.settings.send_policy, null, 'no send policy by default');
  t.equal(w.created_at, w.updated_at, 'new workspace: created_at equals updated_at');

  // Owner: can read, update and manage members.
  const g = await s.req('GET', `/workspaces/${w.id}`, { token });
  t.equal(g.status, 200);
  t.same(g.body, { success: true, data: { workspace: w } }, 'GET returns the same workspace');
  const p = await s.req('PUT', `/workspaces/${w.id}`, { token, body: { name: 'Acme' } });
  t.equal(p.status, 200, p.text);
  const m = await s.req('POST', `/workspaces/${w.id}/members`, { token, body: { user_id: uniqueUser('m'), role: 'member' } });
  t.equal(m.status, 201, m.text);
  // ... and is the owner: the owner cannot be removed.
  const d = await s.req('DELETE', `/workspaces/${w.id}/members/${encodeURIComponent(user)}`, { token });
  t.equal(d.status, 400, d.text);
});

t.test('POST /workspaces validates the name', async (t) => {
  const token = await s.session(uniqueUser('v'));
  sessionError(t, await s.req('POST', '/workspaces', { token, body: {} }), 400, 'VALIDATION_ERROR');
  sessionError(t, await s.req('POST', '/workspaces', { token }), 400, 'VALIDATION_ERROR');
  sessionError(t, await s.req('POST', '/workspaces', { token, body: { name: '' } }), 400, 'VALIDATION_ERROR');
  sessionError(t, await s.req('POST', '/workspaces', { token, body: { name: 'x'.repeat(1000) } }), 400, 'VALIDATION_ERROR');
  sessionError(t, await s.req('POST', '/workspaces', { token, body: { name: 42 } }), 400, 'VALIDATION_ERROR');
  const malformed = await s.req('POST', '/workspaces', { token, raw: '{"name": ', headers: { 'content-type': 'application/json' } });
  sessionError(t, malformed, 400, 'VALIDATION_ERROR');
  // Nothing was created by the refused requests.
  const l = await s.req('GET', '/workspaces', { token });
  t.equal(l.status, 200);
  t.equal(l.body.total, 0);
  t.same(l.body.workspaces, []);
});

t.test("GET /workspaces lists only the caller's workspaces", async (t) => {
  const a = uniqueUser('a');
  const b = uniqueUser('b');
  const ta = await s.session(a);
  const tb = await s.session(b);
  const a1 = (await create(ta, 'A one')).body.data.workspace;
  const a2 = (await create(ta, 'A two')).body.data.workspace;
  const b1 = (await create(tb, 'B one')).body.data.workspace;

  const la = await s.req('GET', '/workspaces', { token: ta });
  t.equal(la.status, 200);
  t.equal(la.body.success, true);
  t.equal(la.body.total, 2);
  t.same(la.body.workspaces.map((w: { id: string }) => w.id).sort(), [a1.id, a2.id].sort());
  for (const w of la.body.workspaces) checkWorkspace(t, w, w.id === a1.id ? 'A one' : 'A two');

  const lb = await s.req('GET', '/workspaces', { token: tb });
  t.equal(lb.body.total, 1);
  t.same(lb.body.workspaces.map((w: { id: string }) => w.id), [b1.id]);

  // Becoming a member adds the workspace to the list.
  t.equal((await s.req('POST', `/workspaces/${a1.id}/members`, { token: ta, body: { user_id: b, role: 'member' } })).status, 201);
  const lb2 = await s.req('GET', '/workspaces', { token: tb });
  t.equal(lb2.body.total, 2);
  t.same(lb2.body.workspaces.map((w: { id: string }) => w.id).sort(), [a1.id, b1.id].sort());
  t.equal(lb2.body.workspaces.length, lb2.body.total);
});

t.test('PUT /workspaces/{id}: name, settings merged key by key, send_policy replaced whole', async (t) => {
  const ws = await newWorkspace(s, 'Before');
  const get = async () => (await s.req('GET', `/workspaces/${ws.id}`, { token: ws.token })).body.data.workspace;
  const before = await get();

  const r1 = await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { name: 'After' } });
  t.equal(r1.status, 200, r1.text);
  t.equal(r1.body.success, true);
  checkWorkspace(t, r1.body.data.workspace, 'After');
  t.equal(r1.body.data.workspace.id, ws.id);
  t.equal(r1.body.data.workspace.created_at, before.created_at, 'created_at unchanged');
  t.ok(Date.parse(r1.body.data.workspace.updated_at) >= Date.parse(before.updated_at), 'updated_at not earlier');
  t.same(r1.body.data.workspace.settings, { timezone: 'UTC', send_policy: null, tracking: { opens: true, clicks: true } }, 'name-only update leaves settings');

  const r2 = await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { settings: { timezone: 'Europe/Paris' } } });
  t.equal(r2.status, 200, r2.text);
  t.same(r2.body.data.workspace.settings, { timezone: 'Europe/Paris', send_policy: null, tracking: { opens: true, clicks: true } });
  t.equal(r2.body.data.workspace.name, 'After', 'settings-only update leaves the name');

  const full = { timezone: 'America/New_York', quiet_hours: { start: '21:00', end: '07:30' }, max_pushes_per_day: 4, max_pushes_per_window: 2, window_hours: 3 };
  const r3 = await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { settings: { send_policy: full } } });
  t.equal(r3.status, 200, r3.text);
  t.same(r3.body.data.workspace.settings, { timezone: 'Europe/Paris', send_policy: full, tracking: { opens: true, clicks: true } }, 'timezone kept, policy set');

  const small = { max_pushes_per_day: 2 };
  const r4 = await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { settings: { send_policy: small } } });
  t.equal(r4.status, 200, r4.text);
  t.strictSame(r4.body.data.workspace.settings.send_policy, small, 'send_policy replaced whole, nothing of the old one kept');

  const r5 = await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { name: 'Both', settings: { timezone: 'Asia/Tokyo' } } });
  t.equal(r5.status, 200, r5.text);
  t.same(r5.body.data.workspace.settings, { timezone: 'Asia/Tokyo', send_policy: small, tracking: { opens: true, clicks: true } }, 'timezone change keeps the policy');
  t.equal(r5.body.data.workspace.name, 'Both');

  t.same(await get(), r5.body.data.workspace, 'GET shows the stored update');

  // Refused updates change nothing.
  sessionError(t, await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { settings: { timezone: 'Not/AZone' } } }), 400, 'VALIDATION_ERROR');
  sessionError(t, await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { name: 'Nope', settings: { timezone: 'Mars/Olympus_Mons' } } }), 400, 'VALIDATION_ERROR');
  sessionError(t, await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { name: '' } }), 400, 'VALIDATION_ERROR');
  sessionError(t, await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, raw: '{nope', headers: { 'content-type': 'application/json' } }), 400, 'VALIDATION_ERROR');
  sessionError(
    t,
    await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { name: 'Nope', settings: { timezone: 'Europe/Berlin', send_policy: { window_hours: 500 } } } }),
    400,
    'INVALID_SEND_POLICY',
  );
  t.same(await get(), r5.body.data.workspace, 'after refused updates the workspace is unchanged');
});

t.test('send policy validation: malformed policies answer 400 INVALID_SEND_POLICY', async (t) => {
  const ws = await newWorkspace(s, 'Policy');
  const valid = { max_pushes_per_day: 7 };
  t.equal((await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { settings: { send_policy: valid } } })).status, 200);

  const bad: [string, unknown][] = [
    ['timezone not IANA', { timezone: 'Mars/Olympus_Mons' }],
    ['timezone garbage', { timezone: 'UTC+25' }],
    ['quiet_hours start 24:00', { quiet_hours: { start: '24:00', end: '08:00' } }],
    ['quiet_hours end minute 60', { quiet_hours: { start: '22:00', end: '08:60' } }],
    ['quiet_hours not HH:MM', { quiet_hours: { start: '7:00', end: '08:00' } }],
    ['quiet_hours missing end', { quiet_hours: { start: '22:00' } }],
    ['quiet_hours start == end', { quiet_hours: { start: '22:00', end: '22:00' } }],
    ['max_pushes_per_day negative', { max_pushes_per_day: -1 }],
    ['max_pushes_per_day non-integer', { max_pushes_per_day: 2.5 }],
    ['max_pushes_per_day string', { max_pushes_per_day: '5' }],
    ['only max_pushes_per_window', { max_pushes_per_window: 3 }],
    ['only window_hours', { window_hours: 6 }],
    ['window 0, hours > 0', { max_pushes_per_window: 0, window_hours: 6 }],
    ['window > 0, hours 0', { max_pushes_per_window: 3, window_hours: 0 }],
    ['window_hours 169', { max_pushes_per_window: 3, window_hours: 169 }],
    ['max_pushes_per_window negative', { max_pushes_per_window: -2, window_hours: 6 }],
    ['unknown field', { max_pushes_per_day: 5, max_pushes_per_hour: 1 }],
  ];
  for (const [why, policy] of bad) {
    const r = await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { settings: { send_policy: policy } } });
    t.test(why, async (t) => sessionError(t, r, 400, 'INVALID_SEND_POLICY'));
  }
  const g = await s.req('GET', `/workspaces/${ws.id}`, { token: ws.token });
  t.strictSame(g.body.data.workspace.settings.send_policy, valid, 'refused policies left the stored one unchanged');
});

t.test('send policy that is not an object is a malformed policy: 400 INVALID_SEND_POLICY', async (t) => {
  const ws = await newWorkspace(s, 'Policy shape');
  for (const policy of ['quiet please', [{ max_pushes_per_day: 1 }], 5]) {
    const r = await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { settings: { send_policy: policy } } });
    sessionError(t, r, 400, 'INVALID_SEND_POLICY');
  }
});

t.test('send policy validation: valid policies are stored as sent', async (t) => {
  const ws = await newWorkspace(s, 'Valid policy');
  const good: [string, unknown][] = [
    ['the documented example', { timezone: 'Europe/Paris', quiet_hours: { start: '22:00', end: '08:00' }, max_pushes_per_day: 5, max_pushes_per_window: 3, window_hours: 6 }],
    ['quiet_hours null', { timezone: 'Europe/Paris', quiet_hours: null, max_pushes_per_day: 5 }],
    ['both window fields 0', { max_pushes_per_window: 0, window_hours: 0 }],
    ['window_hours 168', { max_pushes_per_window: 10, window_hours: 168 }],
    ['empty timezone', { timezone: '', quiet_hours: { start: '00:00', end: '23:59' } }],
    ['quiet hours not wrapping midnight', { quiet_hours: { start: '09:00', end: '17:00' } }],
    ['max_pushes_per_day 0', { max_pushes_per_day: 0 }],
    ['empty policy', {}],
    ['policy null (off)', null],
  ];
  for (const [why, policy] of good) {
    const r = await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { settings: { send_policy: policy } } });
    t.test(why, async (t) => {
      t.equal(r.status, 200, r.text);
      t.strictSame(r.body?.data?.workspace?.settings?.send_policy, policy, 'stored as sent');
    });
  }
});

t.test('members: owner and admin manage, members read only', async (t) => {
  const ws = await newWorkspace(s, 'Team');
  const admin = uniqueUser('admin');
  const member = uniqueUser('member');
  const tAdmin = await s.session(admin);
  const tMember = await s.session(member);

  const a = await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { user_id: admin, role: 'admin' } });
  t.equal(a.status, 201, a.text);
  t.equal(a.body.success, true);
  const m = await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { user_id: member, role: 'member' } });
  t.equal(m.status, 201, m.text);
  t.equal(m.body.success, true);

  // A member reads but does not manage.
  const g = await s.req('GET', `/workspaces/${ws.id}`, { token: tMember });
  t.equal(g.status, 200, g.text);
  t.equal(g.body.data.workspace.id, ws.id);
  forbidden(t, await s.req('PUT', `/workspaces/${ws.id}`, { token: tMember, body: { name: 'Hijacked' } }), 'member PUT');
  forbidden(t, await s.req('PUT', `/workspaces/${ws.id}`, { token: tMember, body: { settings: { send_policy: null } } }), 'member PUT settings');
  forbidden(t, await s.req('POST', `/workspaces/${ws.id}/members`, { token: tMember, body: { user_id: uniqueUser('x'), role: 'member' } }), 'member adds member');
  forbidden(t, await s.req('POST', `/workspaces/${ws.id}/members`, { token: tMember, body: { user_id: member, role: 'admin' } }), 'member promotes self');
  forbidden(t, await s.req('DELETE', `/workspaces/${ws.id}/members/${encodeURIComponent(admin)}`, { token: tMember }), 'member removes admin');
  t.equal((await s.req('GET', `/workspaces/${ws.id}`, { token: ws.token })).body.data.workspace.name, 'Team', 'name unchanged');

  // An admin manages.
  const p = await s.req('PUT', `/workspaces/${ws.id}`, { token: tAdmin, body: { name: 'Team (admin)' } });
  t.equal(p.status, 200, p.text);
  t.equal(p.body.data.workspace.name, 'Team (admin)');
  const third = uniqueUser('third');
  t.equal((await s.req('POST', `/workspaces/${ws.id}/members`, { token: tAdmin, body: { user_id: third, role: 'member' } })).status, 201);
  t.equal((await s.req('GET', `/workspaces/${ws.id}`, { token: await s.session(third) })).status, 200, 'member added by admin can read');

  // Invalid member bodies.
  sessionError(t, await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { user_id: uniqueUser('y'), role: 'owner' } }), 400, 'VALIDATION_ERROR');
  sessionError(t, await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { user_id: uniqueUser('y'), role: 'superuser' } }), 400, 'VALIDATION_ERROR');
  sessionError(t, await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { role: 'member' } }), 400, 'VALIDATION_ERROR');
  sessionError(t, await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { user_id: '', role: 'member' } }), 400, 'VALIDATION_ERROR');
});

t.test('members: re-adding updates the role (200)', async (t) => {
  const ws = await newWorkspace(s, 'Roles');
  const user = uniqueUser('promoted');
  const tok = await s.session(user);
  t.equal((await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { user_id: user, role: 'member' } })).status, 201);
  forbidden(t, await s.req('PUT', `/workspaces/${ws.id}`, { token: tok, body: { name: 'X' } }), 'member before promotion');

  const up = await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { user_id: user, role: 'admin' } });
  t.equal(up.status, 200, up.text);
  t.equal(up.body.success, true);
  const p = await s.req('PUT', `/workspaces/${ws.id}`, { token: tok, body: { name: 'Promoted' } });
  t.equal(p.status, 200, `admin after promotion can PUT: ${p.text}`);

  const down = await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { user_id: user, role: 'member' } });
  t.equal(down.status, 200, down.text);
  forbidden(t, await s.req('PUT', `/workspaces/${ws.id}`, { token: tok, body: { name: 'Y' } }), 'member after demotion');

  // Still one membership: the workspace is listed once.
  const l = await s.req('GET', '/workspaces', { token: tok });
  t.equal(l.body.total, 1);
  t.equal(l.body.workspaces[0].id, ws.id);
});

t.test('members: removal', async (t) => {
  const ws = await newWorkspace(s, 'Removal');
  const admin = uniqueUser('admin');
  const member = uniqueUser('member');
  const tAdmin = await s.session(admin);
  const tMember = await s.session(member);
  t.equal((await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { user_id: admin, role: 'admin' } })).status, 201);
  t.equal((await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { user_id: member, role: 'member' } })).status, 201);
  t.equal((await s.req('GET', `/workspaces/${ws.id}`, { token: tMember })).status, 200, 'member reads before removal');

  const d = await s.req('DELETE', `/workspaces/${ws.id}/members/${encodeURIComponent(member)}`, { token: ws.token });
  t.equal(d.status, 200, d.text);
  t.equal(d.body.success, true);
  forbidden(t, await s.req('GET', `/workspaces/${ws.id}`, { token: tMember }), 'removed member GET');
  forbidden(t, await s.req('PUT', `/workspaces/${ws.id}`, { token: tMember, body: { name: 'Z' } }), 'removed member PUT');
  const l = await s.req('GET', '/workspaces', { token: tMember });
  t.equal(l.body.total, 0, 'no longer listed for the removed member');

  // Removing someone who is not a member (any more): 404.
  sessionError(t, await s.req('DELETE', `/workspaces/${ws.id}/members/${encodeURIComponent(member)}`, { token: ws.token }), 404, 'NOT_FOUND');
  sessionError(t, await s.req('DELETE', `/workspaces/${ws.id}/members/${encodeURIComponent(uniqueUser('never'))}`, { token: ws.token }), 404, 'NOT_FOUND');

  // The owner cannot be removed, by themself or by an admin.
  sessionError(t, await s.req('DELETE', `/workspaces/${ws.id}/members/${encodeURIComponent(ws.owner)}`, { token: ws.token }), 400, 'VALIDATION_ERROR');
  sessionError(t, await s.req('DELETE', `/workspaces/${ws.id}/members/${encodeURIComponent(ws.owner)}`, { token: tAdmin }), 400, 'VALIDATION_ERROR');
  t.equal((await s.req('GET', `/workspaces/${ws.id}`, { token: ws.token })).status, 200, 'owner still a member');

  // An admin removes a member.
  const other = uniqueUser('other');
  t.equal((await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { user_id: other, role: 'member' } })).status, 201);
  t.equal((await s.req('DELETE', `/workspaces/${ws.id}/members/${encodeURIComponent(other)}`, { token: tAdmin })).status, 200);
  forbidden(t, await s.req('GET', `/workspaces/${ws.id}`, { token: await s.session(other) }), 'member removed by admin');
});

t.test('members: any member lists them, the owner first; another workspace\'s never show', async (t) => {
  const ws = await newWorkspace(s, 'Listed');
  const other = await newWorkspace(s, 'Other');
  const admin = uniqueUser('admin');
  const member = uniqueUser('member');
  const outsider = uniqueUser('outsider');
  for (const [user, role] of [[admin, 'admin'], [member, 'member']]) {
    t.equal((await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { user_id: user, role } })).status, 201);
  }
  t.equal((await s.req('POST', `/workspaces/${other.id}/members`, { token: other.token, body: { user_id: outsider, role: 'admin' } })).status, 201);

  const expected = [
    [ws.owner, 'owner'],
    [admin, 'admin'],
    [member, 'member'],
  ];
  for (const [who, token] of [['owner', ws.token], ['member', await s.session(member)]] as const) {
    const r = await s.req('GET', `/workspaces/${ws.id}/members`, { token });
    t.equal(r.status, 200, `${who} lists: ${r.text}`);
    t.equal(r.body.success, true);
    t.equal(r.body.total, 3);
    t.same(r.body.members.map((m: { user_id: string; role: string }) => [m.user_id, m.role]), expected, `${who}: the owner first, then in the order added`);
    for (const m of r.body.members) {
      t.strictSame(Object.keys(m).sort(), ['created_at', 'role', 'user_id', 'workspace_id']);
      t.equal(m.workspace_id, ws.id);
      t.match(m.created_at, ISO_MS);
    }
    t.notOk(r.text.includes(other.owner) || r.text.includes(outsider), "another workspace's members never show");
  }

  // A removed member no longer lists (403) nor is listed.
  t.equal((await s.req('DELETE', `/workspaces/${ws.id}/members/${encodeURIComponent(member)}`, { token: ws.token })).status, 200);
  forbidden(t, await s.req('GET', `/workspaces/${ws.id}/members`, { token: await s.session(member) }), 'removed member lists');
  const after = await s.req('GET', `/workspaces/${ws.id}/members`, { token: ws.token });
  t.same(after.body.members.map((m: { user_id: string }) => m.user_id), [ws.owner, admin]);
  forbidden(t, await s.req('GET', `/workspaces/${ws.id}/members`, { token: await s.session(outsider) }), "another workspace's admin");
});

t.test('non-member, unknown and non-UUID workspace ids: 403 on every workspace route', async (t) => {
  const ws = await newWorkspace(s, 'Private');
  await newKey(s, ws, { permissions: ['people:read'] });
  const stranger = await s.session(uniqueUser('stranger'));
  const unknown = '0190f0f0-0000-7000-8000-000000000000';
  const member = uniqueUser('member');
  const cases: [string, string, string][] = [
    ['non-member', ws.id, stranger],
    ['unknown workspace', unknown, ws.token],
    ['non-UUID id', 'not-a-uuid', ws.token],
    ['non-UUID numeric id', '12345', ws.token],
  ];
  for (const [why, id, token] of cases) {
    t.test(why, async (t) => {
      forbidden(t, await s.req('GET', `/workspaces/${id}`, { token }), 'GET');
      forbidden(t, await s.req('PUT', `/workspaces/${id}`, { token, body: { name: 'Taken over' } }), 'PUT');
      forbidden(t, await s.req('PUT', `/workspaces/${id}`, { token, body: { settings: { send_policy: { window_hours: 999 } } } }), 'PUT invalid policy');
      forbidden(t, await s.req('GET', `/workspaces/${id}/members`, { token }), 'GET members');
      forbidden(t, await s.req('POST', `/workspaces/${id}/members`, { token, body: { user_id: member, role: 'admin' } }), 'POST members');
      forbidden(t, await s.req('DELETE', `/workspaces/${id}/members/${encodeURIComponent(ws.owner)}`, { token }), 'DELETE member (owner)');
      forbidden(t, await s.req('DELETE', `/workspaces/${id}/members/nobody`, { token }), 'DELETE member (unknown)');
      forbidden(t, await s.req('GET', `/workspaces/${id}/api-keys`, { token }), 'GET api-keys');
      forbidden(t, await s.req('POST', `/workspaces/${id}/api-keys`, { token, body: { name: 'k', permissions: ['people:read'] } }), 'POST api-keys');
      forbidden(t, await s.req('GET', `/workspaces/${id}/people`, { token }), 'GET people (dashboard)');
    });
  }
  // The stranger's attempts changed nothing.
  const g = await s.req('GET', `/workspaces/${ws.id}`, { token: ws.token });
  t.equal(g.body.data.workspace.name, 'Private');
  forbidden(t, await s.req('GET', `/workspaces/${ws.id}`, { token: await s.session(member) }), 'member was not added by the stranger');
  const keys = await s.req('GET', `/workspaces/${ws.id}/api-keys`, { token: ws.token });
  t.equal(keys.body.total, 1, 'no key was created by the stranger');
});
