// Lists and CSV imports through the real HTTP server (docs/audiences.md): CRUD; an import
// streamed, its people upserted with their traits and added to the list, progress and the first
// 100 row errors readable; bad files (wrong header, BOM, mixed line endings, quoted newlines, a
// 10 MB line, invalid UTF-8, more rows than the limit) end in a clear import error or per-row
// errors; another workspace is answered while an import runs; kill -9 mid-import resumes with
// no row twice and none lost.
import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, newWorkspace, serversOnOneDir, storeUrl, type Herald } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { ISO_MS, NO_LIMITS, UUID, sessionError, type Ws } from '../helpers/assert.js';

const s = await sharedServer();

const lists = (ws: Ws, rest = '') => `/workspaces/${ws.id}/lists${rest}`;

async function newList(h: Herald, ws: Ws, name = 'Customers'): Promise<string> {
  const r = await h.req('POST', lists(ws), { token: ws.token, body: { name } });
  if (r.status !== 201) throw new Error(r.text);
  return r.body.data.list.id;
}

const upload = (h: Herald, ws: Ws, listId: string, csv: string | Uint8Array, type = 'text/csv') =>
  h.req('POST', lists(ws, `/${listId}/import`), { token: ws.token, raw: csv, headers: { 'content-type': type } });

const progress = (h: Herald, ws: Ws, id: string) => h.req('GET', `/workspaces/${ws.id}/imports/${id}`, { token: ws.token });

/** Imports `csv` and waits for it to end: its final record. */
async function imported(t: Test, h: Herald, ws: Ws, listId: string, csv: string | Uint8Array, ms = 30_000) {
  const r = await upload(h, ws, listId, csv);
  t.equal(r.status, 202, r.text);
  t.match(r.body.import_id, UUID);
  const done = await eventually(async () => {
    const p = await progress(h, ws, r.body.import_id);
    return p.body.status === 'done' || p.body.status === 'failed' ? p.body : null;
  }, ms);
  t.ok(done, 'the import ended');
  return done;
}

async function members(h: Herald, ws: Ws, listId: string): Promise<{ id: string; external_id: string; email: string | null }[]> {
  const out = [];
  let after: string | null = null;
  do {
    const r = await h.req('GET', lists(ws, `/${listId}/people?limit=1000${after ? `&after=${after}` : ''}`), { token: ws.token });
    if (r.status !== 200) throw new Error(r.text);
    out.push(...r.body.people);
    after = r.body.next;
  } while (after);
  return out;
}

t.test('lists: create, list, get, change, delete', async (t) => {
  const ws = await newWorkspace(s);
  const r = await s.req('POST', lists(ws), { token: ws.token, body: { name: 'VIPs', description: 'The best' } });
  t.equal(r.status, 201, r.text);
  const l = r.body.data.list;
  t.match(l, { id: UUID, workspace_id: ws.id, name: 'VIPs', description: 'The best', members: 0, created_at: ISO_MS });
  t.same((await s.req('GET', lists(ws, `/${l.id}`), { token: ws.token })).body.data.list, l);
  t.equal((await s.req('GET', lists(ws, `/${l.id.toUpperCase()}`), { token: ws.token })).status, 200);
  const u = await s.req('PUT', lists(ws, `/${l.id}`), { token: ws.token, body: { description: null } });
  t.equal(u.status, 200, u.text);
  t.match(u.body.data.list, { name: 'VIPs', description: null });
  const all = await s.req('GET', lists(ws), { token: ws.token });
  t.equal(all.body.total, 1);
  sessionError(t, await s.req('POST', lists(ws), { token: ws.token, body: {} }), 400, 'VALIDATION_ERROR', 'name');
  sessionError(t, await s.req('GET', lists(ws, `/${randomUUID()}`), { token: ws.token }), 404, 'NOT_FOUND');
  sessionError(t, await s.req('GET', lists(ws, '/nope'), { token: ws.token }), 404, 'NOT_FOUND');
  const other = await newWorkspace(s);
  t.equal((await s.req('GET', lists(other, `/${l.id}`), { token: other.token })).status, 404, "another workspace's list is not found");
  t.equal((await s.req('GET', lists(ws), { token: other.token })).status, 403);
  t.equal((await s.req('DELETE', lists(ws, `/${l.id}`), { token: ws.token })).status, 200);
  t.equal((await s.req('GET', lists(ws, `/${l.id}`), { token: ws.token })).status, 404);
});

t.test('an import upserts people with their traits into the list; progress and errors are readable', async (t) => {
  const ws = await newWorkspace(s);
  const listId = await newList(s, ws);
  // BOM, CRLF and LF mixed, a quoted newline and comma, an email-only row, a blank cell.
  const csv = '\uFEFFexternal_id,email,first_name,plan,note\r\n' +
    'u1,u1@example.com,Ann,pro,"line one\nline two"\n' +
    'u2,,Bob,free,"a, b"\r\n' +
    ',solo@example.com,Sol,,\n' +
    'u2,,,team,\n';
  const done = await imported(t, s, ws, listId, csv);
  t.match(done, { status: 'done', rows_read: 4, rows_added: 4, rows_failed: 0, errors: [], error: null, finished_at: ISO_MS });
  const m = await members(s, ws, listId);
  t.same(m.map((p) => p.external_id).sort(), ['solo@example.com', 'u1', 'u2']);
  const u1 = m.find((p) => p.external_id === 'u1')!;
  const person = await s.req('GET', `/workspaces/${ws.id}/people/${u1.id}`, { token: ws.token });
  t.equal(person.status, 200, person.text);
  t.match(JSON.stringify(person.body), /line one\\nline two/, 'the quoted newline is kept');
  t.match(person.body.data?.person ?? person.body.person ?? person.body, { email: 'u1@example.com' });
  const list = await s.req('GET', lists(ws, `/${listId}`), { token: ws.token });
  t.equal(list.body.data.list.members, 3);
  // A row with only an email names the person who has that address (u1), not a new one.
  const again = await imported(t, s, ws, listId, 'email,plan\nU1@example.com,enterprise\n');
  t.match(again, { status: 'done', rows_added: 1 });
  t.equal((await members(s, ws, listId)).length, 3, 'no new person for a known address');
  const after = await s.req('GET', `/workspaces/${ws.id}/people/${u1.id}`, { token: ws.token });
  t.match(JSON.stringify(after.body), /"plan":"enterprise"/);
  const history = await s.req('GET', lists(ws, `/${listId}/imports`), { token: ws.token });
  t.equal(history.status, 200, history.text);
  t.equal(history.body.imports.length, 2);
  t.equal(history.body.imports[0].id, again.id, 'newest first');
});

t.test('an anonymous person merged into an identified one takes their list memberships along', async (t) => {
  const ws = await newWorkspace(s);
  const key = (await s.req('POST', `/workspaces/${ws.id}/api-keys`, { token: ws.token, body: { name: 'w', permissions: ['people:write'] } })).body.api_key.key;
  const listId = await newList(s, ws);
  t.match(await imported(t, s, ws, listId, 'external_id,plan\nanon-7,trial\n'), { status: 'done', rows_added: 1 });
  const r = await s.req('POST', '/identify', { token: key, body: { userId: 'known-7', anonymousId: 'anon-7' } });
  t.equal(r.status, 200, r.text);
  const after = await eventually(async () => {
    const m = await members(s, ws, listId);
    return m.length === 1 && m[0]!.external_id === 'known-7' ? m : null;
  });
  t.ok(after, 'the identified person is the member now');
});

t.test('bad rows are refused one by one, with their row numbers (the first 100 kept)', async (t) => {
  const ws = await newWorkspace(s);
  const listId = await newList(s, ws);
  const bad = Buffer.concat([
    Buffer.from('external_id,city\nok1,Paris\n,Nowhere\nok2,Rome,extra\n'),
    Buffer.from([0x62, 0x61, 0x64, 0x2c, 0xff, 0xfe, 0x0a]), // "bad,\xff\xfe\n": not UTF-8
    Buffer.from(`ok3,${'x'.repeat(10_001)}\nok4,Oslo\n`),
  ]);
  const done = await imported(t, s, ws, listId, bad);
  t.match(done, { status: 'done', rows_read: 6, rows_added: 2, rows_failed: 4 });
  t.same(done.errors.map((e: { row: number }) => e.row), [2, 3, 4, 5]);
  t.match(done.errors[0].error, /neither an external_id nor an email/);
  t.match(done.errors[1].error, /has 3 fields; the header has 2/);
  t.match(done.errors[2].error, /city is not valid UTF-8/);
  t.match(done.errors[3].error, /longer than 10000/);
  const many = 'external_id\n' + Array.from({ length: 150 }, (_, i) => `${'y'.repeat(256)}${i}`).join('\n') + '\n';
  const capped = await imported(t, s, ws, listId, many);
  t.match(capped, { status: 'done', rows_read: 150, rows_failed: 150 });
  t.equal(capped.errors.length, 100, 'the first 100 errors are kept');
  t.equal(capped.errors[99].row, 100);
});

t.test('bad files end in a clear import error; requests are refused before anything is staged', async (t) => {
  const ws = await newWorkspace(s);
  const listId = await newList(s, ws);
  const wrong = await imported(t, s, ws, listId, 'id,name\n1,Ann\n');
  t.match(wrong, { status: 'failed', rows_read: 0, error: /header row must name an external_id or an email column/ });
  const badKey = await imported(t, s, ws, listId, 'external_id,first name\n1,Ann\n');
  t.match(badKey, { status: 'failed', error: /column names must be trait keys/ });
  const huge = await imported(t, s, ws, listId, `external_id,blob\nfirst,ok\nsecond,"${'z'.repeat(10 * 1024 * 1024)}"\nthird,ok\n`);
  t.match(huge, { status: 'failed', rows_read: 1, rows_added: 1, error: /row 2: longer than 1048576 bytes/ });
  const open = await imported(t, s, ws, listId, 'external_id,x\na,1\nb,"never closed\n');
  t.match(open, { status: 'failed', rows_added: 1, error: /row 2: .*Quote Not Closed/ });
  const empty = await imported(t, s, ws, listId, '\n\n');
  t.match(empty, { status: 'failed', error: /empty/ });
  // Authenticated before anything is staged: a refused caller's body never reaches the disk.
  const staged = () => readdirSync(join(s.dataDir, 'imports')).length;
  const before = staged();
  const big = 'external_id\n' + 'x\n'.repeat(1_000_000);
  const anonymous = await s.req('POST', lists(ws, `/${listId}/import`), { raw: big, headers: { 'content-type': 'text/csv' } });
  t.equal(anonymous.status, 401, anonymous.text);
  const stranger = await newWorkspace(s);
  t.equal((await s.req('POST', lists(ws, `/${listId}/import`), { token: 'not-a-token', raw: big, headers: { 'content-type': 'text/csv' } })).status, 401);
  t.equal((await upload(s, stranger, listId, big)).status, 404, "another workspace's list (the path names the caller's own workspace)");
  t.equal((await s.req('POST', lists(ws, `/${listId}/import`), { token: stranger.token, raw: big, headers: { 'content-type': 'text/csv' } })).status, 403, 'not a member');
  t.equal(staged(), before, 'nothing left staged');
  sessionError(t, await upload(s, ws, listId, 'external_id\na\n', 'application/json'), 400, 'VALIDATION_ERROR', 'Content-Type');
  sessionError(t, await upload(s, ws, listId, ''), 400, 'VALIDATION_ERROR', 'body');
  sessionError(t, await upload(s, ws, randomUUID(), 'external_id\na\n'), 404, 'NOT_FOUND');
  sessionError(t, await progress(s, ws, randomUUID()), 404, 'NOT_FOUND');
  t.same(await members(s, ws, listId).then((m) => m.map((p) => p.external_id).sort()), ['a', 'first']);
});

t.test('kill -9 mid-import: the restart resumes it, no row twice and none lost; past the row limit the import ends failed', async (t) => {
  const { first, again } = await serversOnOneDir(t, { ...NO_LIMITS, HERALD_IMPORT_MAX_ROWS: '100000' }, 'list-import');
  const ws = await newWorkspace(first);
  const listId = await newList(first, ws);
  const ROWS = 100_000;
  const csv = 'external_id,email,score\n' + Array.from({ length: ROWS }, (_, i) => `p${i},p${i}@example.com,${i}`).join('\n') + '\n';
  const r = await upload(first, ws, listId, csv);
  t.equal(r.status, 202, r.text);
  const id = r.body.import_id;
  // Another workspace is answered while the import runs.
  const other = await newWorkspace(first);
  const started = Date.now();
  t.equal((await first.req('GET', `/workspaces/${other.id}/lists`, { token: other.token })).status, 200);
  t.ok(Date.now() - started < 2_000, 'another workspace is not stalled');
  const midway = await eventually(async () => {
    const p = await progress(first, ws, id);
    return p.body.rows_read > 0 ? p.body : null;
  }, 60_000);
  t.ok(midway, 'progress is readable while it runs');
  t.ok(midway.rows_read < ROWS, `killed midway (${midway?.rows_read} rows read)`);
  first.proc.kill('SIGKILL');
  await first.stop();
  const second = await again();
  const done = await eventually(async () => {
    const p = await progress(second, ws, id);
    return p.body.status === 'done' || p.body.status === 'failed' ? p.body : null;
  }, 120_000);
  t.match(done, { status: 'done', rows_read: ROWS, rows_added: ROWS, rows_failed: 0 });
  const db = new pg.Client({ connectionString: storeUrl(second) });
  await db.connect();
  t.teardown(() => db.end());
  const counts = await db.query<{ members: number; people: number; scores: number }>(
    `SELECT (SELECT count(*)::int FROM list_members WHERE list_id = $1) AS members,
            (SELECT count(*)::int FROM people WHERE workspace_id = $2) AS people,
            (SELECT count(DISTINCT traits->>'score')::int FROM people WHERE workspace_id = $2) AS scores`,
    [listId, ws.id],
  );
  t.same(counts.rows[0], { members: ROWS, people: ROWS, scores: ROWS }, 'every row once');
  // Past HERALD_IMPORT_MAX_ROWS: the rows before the limit are kept, the import says why it stopped.
  const over = await imported(t, second, ws, await newList(second, ws, 'Over'), csv.slice(0, -1) + '\nextra1,e1@example.com,1\nextra2,e2@example.com,2\n', 120_000);
  t.match(over, { status: 'failed', rows_read: ROWS, error: /more than 100000 rows/ });
});
