// People through the real HTTP server: identify, the people routes on both surfaces, errors,
// limits and the anonymous merge (README, Routes, Request bodies and Errors).
import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { newKey, eventually, workspaceWithKeys, uniqueUser, type Res } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { type Ws, UUID, ISO_MS, FORBIDDEN, keyError, badRequest } from '../helpers/assert.js';

const s = await sharedServer();

const KEY_PERSON_FIELDS = ['created_at', 'email', 'id', 'phone', 'status', 'traits', 'updated_at', 'userId', 'workspace_id'];
const TRIMMED_FIELDS = ['id', 'userId', 'workspace_id'];
const DASHBOARD_FIELDS = [
  'id', 'workspace_id', 'external_id', 'email', 'phone', 'first_name', 'last_name', 'avatar_url', 'timezone', 'locale',
  'status', 'attributes', 'created_at', 'updated_at', 'first_seen_at', 'last_seen_at',
];

const setup = () => workspaceWithKeys(s, { all: ['*'], write: ['people:write'], read: ['people:read'], del: ['people:delete'] });
type Setup = Awaited<ReturnType<typeof setup>>;

const sorted = (a: string[]) => [...a].sort();
const enc = encodeURIComponent;

function identify(token: string, body: unknown): Promise<Res> {
  return s.req('POST', '/identify', { token, body });
}
function getPerson(token: string, userId: string): Promise<Res> {
  return s.req('GET', `/people/${enc(userId)}`, { token });
}

/** The session-route error body (README, Errors). */
function sessionError(t: Test, r: Res, status: number, code: string): void {
  t.equal(r.status, status, `status ${status}: ${r.text.slice(0, 300)}`);
  t.equal(r.body?.success, false);
  t.equal(r.body?.error?.code, code, `code ${code}`);
  t.type(r.body?.error?.message, 'string');
  t.ok(r.body?.error && 'details' in r.body.error, 'error.details present');
}

async function notStored(t: Test, token: string, userId: string, what: string): Promise<void> {
  const r = await getPerson(token, userId);
  t.equal(r.status, 404, `${what}: nothing written (${r.status} ${r.text.slice(0, 200)})`);
}

function dashboardList(ws: Ws, query = '', token = ws.token): Promise<Res> {
  return s.req('GET', `/workspaces/${ws.id}/people${query ? `?${query}` : ''}`, { token });
}

function patchPerson(ws: Ws, personId: string, body: unknown, token = ws.token): Promise<Res> {
  return s.req('PATCH', `/workspaces/${ws.id}/people/${personId}`, { token, body });
}

/** Creates `n` people through the batch route; returns their userIds in order. */
async function many(k: Setup, n: number, label = 'p'): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => `${label}-${String(i).padStart(4, '0')}`);
  const r = await s.req('POST', '/people/batch', { token: k.write, body: { identify: ids.map((userId) => ({ userId })) } });
  if (r.status !== 200 || r.body.results.some((x: { success: boolean }) => !x.success)) throw new Error(`batch failed: ${r.status} ${r.text.slice(0, 500)}`);
  return ids;
}

// ---------------------------------------------------------------------------------------
// POST /identify

t.test('identify: 200 with the trimmed person for a key without people:read', async (t) => {
  const k = await setup();
  const r = await identify(k.write, { userId: 'u-trim', email: 'trim@example.com', traits: { plan: 'pro' } });
  t.equal(r.status, 200, r.text);
  t.equal(r.body.success, true);
  t.same(sorted(Object.keys(r.body)), ['person', 'success'], 'body is {success, person}');
  t.same(sorted(Object.keys(r.body.person)), TRIMMED_FIELDS, 'trimmed to id, workspace_id, userId');
  t.match(r.body.person.id, UUID);
  t.equal(r.body.person.workspace_id, k.ws.id);
  t.equal(r.body.person.userId, 'u-trim');

  // The public key and a people:identify key get the trimmed person too.
  const pub = await newKey(s, k.ws, { key_type: 'public' });
  const p = await identify(pub.key, { userId: 'u-trim', traits: { viaPublic: true } });
  t.equal(p.status, 200, p.text);
  t.same(p.body, { success: true, person: { id: r.body.person.id, workspace_id: k.ws.id, userId: 'u-trim' } }, 'public key: same person, trimmed');
  const idk = await newKey(s, k.ws, { permissions: ['people:identify'] });
  const q = await identify(idk.key, { userId: 'u-trim' });
  t.equal(q.status, 200, q.text);
  t.same(q.body, { success: true, person: { id: r.body.person.id, workspace_id: k.ws.id, userId: 'u-trim' } }, 'people:identify key: trimmed');

  // people:identify opens only /identify.
  for (const [method, path, body] of [
    ['POST', '/people', { userId: 'x' }],
    ['POST', '/people/upsert', { userId: 'x' }],
    ['POST', '/people/batch', { identify: [{ userId: 'x' }] }],
    ['PUT', '/people/u-trim', { traits: { a: 1 } }],
    ['GET', '/people/u-trim', undefined],
    ['DELETE', '/people/u-trim', undefined],
  ] as const) {
    const f = await s.req(method, path, { token: idk.key, body });
    t.equal(f.status, 403, `${method} ${path} with people:identify`);
    t.same(f.body, FORBIDDEN);
  }
  // A key without any people permission cannot identify.
  const dev = await newKey(s, k.ws, { permissions: ['devices:write'] });
  const d = await identify(dev.key, { userId: 'u-trim' });
  t.equal(d.status, 403);
  t.same(d.body, FORBIDDEN);

  const g = await getPerson(k.read, 'u-trim');
  t.equal(g.status, 200);
  t.same(g.body.person.traits, { plan: 'pro', viaPublic: true }, 'the public identify wrote');
});

t.test('identify: the full person for a key with people:read', async (t) => {
  const k = await setup();
  const r = await identify(k.all, { userId: 'u-full', email: 'full@example.com', phone: '+15550001111', traits: { plan: 'pro', n: 3 } });
  t.equal(r.status, 200, r.text);
  t.equal(r.body.success, true);
  const p = r.body.person;
  t.same(sorted(Object.keys(p)), KEY_PERSON_FIELDS, 'full person fields; no unsubscribed_at/unsubscribe_reason');
  t.match(p.id, UUID);
  t.equal(p.workspace_id, k.ws.id);
  t.equal(p.userId, 'u-full');
  t.equal(p.email, 'full@example.com');
  t.equal(p.phone, '+15550001111');
  t.same(p.traits, { plan: 'pro', n: 3 });
  t.equal(p.status, 'active', 'new people are active');
  t.match(p.created_at, ISO_MS);
  t.match(p.updated_at, ISO_MS);

  const rw = await newKey(s, k.ws, { permissions: ['people:write', 'people:read'] });
  const again = await identify(rw.key, { userId: 'u-full' });
  t.equal(again.status, 200);
  t.same(sorted(Object.keys(again.body.person)), KEY_PERSON_FIELDS, 'people:write + people:read: full');
  t.equal(again.body.person.id, p.id, 'same person');
  t.same(again.body.person.traits, { plan: 'pro', n: 3 }, 'traits kept when none are sent');
  t.equal(again.body.person.email, 'full@example.com', 'email kept when not sent');

  const g = await getPerson(k.read, 'u-full');
  t.equal(g.status, 200, g.text);
  t.equal(g.body.success, true);
  t.same(sorted(Object.keys(g.body.person)), KEY_PERSON_FIELDS);
  t.same({ ...g.body.person, updated_at: null }, { ...again.body.person, updated_at: null }, 'GET shows what identify echoed');
});

t.test('identify: userId, user_id and external_id are aliases of one identifier', async (t) => {
  const k = await setup();
  for (const alias of ['userId', 'user_id', 'external_id']) {
    const id = `via-${alias}`;
    const r = await identify(k.all, { [alias]: id, traits: { alias } });
    t.equal(r.status, 200, `${alias}: ${r.text}`);
    t.equal(r.body.person.userId, id, `${alias} sets userId`);
    const g = await getPerson(k.read, id);
    t.equal(g.status, 200);
    t.same(g.body.person.traits, { alias });
  }
  // The aliases address the same person.
  const a = await identify(k.all, { user_id: 'via-userId', traits: { second: 1 } });
  t.equal(a.status, 200);
  const g = await getPerson(k.read, 'via-userId');
  t.same(g.body.person.traits, { alias: 'userId', second: 1 }, 'user_id reached the person created with userId');

  const agree = await identify(k.all, { userId: 'agree', user_id: 'agree', external_id: 'agree' });
  t.equal(agree.status, 200, `three agreeing aliases: ${agree.text}`);
  t.equal(agree.body.person.userId, 'agree');
  const two = await identify(k.all, { userId: 'agree2', external_id: 'agree2' });
  t.equal(two.status, 200, 'two agreeing aliases');

  for (const body of [
    { userId: 'c-1', user_id: 'c-2' },
    { userId: 'c-1', external_id: 'c-2' },
    { user_id: 'c-1', external_id: 'c-2' },
    { userId: 'c-1', user_id: 'c-1', external_id: 'c-2' },
  ]) {
    const r = await identify(k.all, body);
    keyError(t, r, 400, 'IDENTIFIER_CONFLICT');
  }
  await notStored(t, k.read, 'c-1', 'conflict');
  await notStored(t, k.read, 'c-2', 'conflict');
});

t.test('identify: schema failures are 400 Bad Request and write nothing', async (t) => {
  const k = await setup();
  for (const body of [{}, { email: 'x@example.com' }, { traits: { a: 1 } }]) {
    const r = await identify(k.all, body);
    badRequest(t, r, 'userId');
  }
  const none = await s.req('POST', '/identify', { token: k.all });
  badRequest(t, none, 'userId');

  const long = 'u'.repeat(256);
  badRequest(t, await identify(k.all, { userId: long }), 'userId');
  badRequest(t, await identify(k.all, { user_id: long }));
  badRequest(t, await identify(k.all, { external_id: long }));
  badRequest(t, await identify(k.all, { userId: '' }), 'userId');
  await notStored(t, k.read, long, '256-char userId');
  const max = 'u'.repeat(255);
  const ok = await identify(k.all, { userId: max });
  t.equal(ok.status, 200, '255-char userId is fine');
  t.equal(ok.body.person.userId, max);

  badRequest(t, await identify(k.all, { userId: 'bad-email', email: 'not-an-email' }), 'email');
  badRequest(t, await identify(k.all, { userId: 'bad-email', email: 'a'.repeat(250) + '@x.io' }), 'email');
  badRequest(t, await identify(k.all, { userId: 'bad-email', phone: '1'.repeat(51) }), 'phone');
  badRequest(t, await identify(k.all, { userId: 'bad-email', traits: ['a'] }), 'traits');
  badRequest(t, await identify(k.all, { userId: 'bad-email', traits: 'a' }), 'traits');
  badRequest(t, await identify(k.all, { userId: 'bad-email', timestamp: 'yesterday' }), 'timestamp');
  badRequest(t, await identify(k.all, { userId: 42 }), 'userId');
  await notStored(t, k.read, 'bad-email', 'schema failure');

  const malformed = await s.req('POST', '/identify', { token: k.all, raw: '{"userId": "mal', headers: { 'content-type': 'application/json' } });
  t.equal(malformed.status, 400, 'malformed JSON is 400');
  await notStored(t, k.read, 'mal', 'malformed JSON');

  const fine = await identify(k.all, { userId: 'ok-email', email: 'ok@example.com', phone: '1'.repeat(50), timestamp: '2024-01-02T03:04:05.000Z' });
  t.equal(fine.status, 200, fine.text);
  t.equal(fine.body.person.phone, '1'.repeat(50));
});

t.test('identify: anonymousId over 36 characters fails the whole call', async (t) => {
  const k = await setup();
  const r = await identify(k.all, { userId: 'anon-long', email: 'a@example.com', traits: { a: 1 }, anonymousId: 'a'.repeat(37) });
  t.equal(r.status, 400, r.text);
  t.equal(r.body.error, 'Anonymous ID must be 36 characters or less', 'exact message');
  t.equal(r.body.success, false);
  await notStored(t, k.read, 'anon-long', 'anonymousId of 37');

  // An existing person is left untouched too.
  await identify(k.all, { userId: 'anon-existing', traits: { a: 1 } });
  const r2 = await identify(k.all, { userId: 'anon-existing', traits: { a: 2 }, anonymousId: 'b'.repeat(37) });
  t.equal(r2.status, 400);
  t.equal(r2.body.error, 'Anonymous ID must be 36 characters or less');
  t.same((await getPerson(k.read, 'anon-existing')).body.person.traits, { a: 1 }, 'traits unchanged');

  const ok = await identify(k.all, { userId: 'anon-36', anonymousId: randomUUID() });
  t.equal(ok.status, 200, `36 characters is fine: ${ok.text}`);
});

t.test('identify: trait violations are 400 INVALID_TRAITS and write nothing', async (t) => {
  const k = await setup();
  let deep: unknown = 1;
  for (let i = 0; i < 11; i++) deep = { n: deep };
  const cases: [string, Record<string, unknown>][] = [
    ['dotted key', { 'a.b': 1 }],
    ['space in key', { 'a b': 1 }],
    ['hyphen in key', { 'a-b': 1 }],
    ['leading digit', { '1a': 1 }],
    ['leading underscore', { _a: 1 }],
    ['256-char key', { ['k'.repeat(256)]: 1 }],
    ['reserved id', { id: 'x' }],
    ['reserved workspace_id', { workspace_id: 'x' }],
    ['reserved user_id', { user_id: 'x' }],
    ['reserved anonymous_id', { anonymous_id: 'x' }],
    ['reserved created_at', { created_at: 'x' }],
    ['reserved updated_at', { updated_at: 'x' }],
    ['10,001-char string', { s: 'x'.repeat(10_001) }],
    ['10,001-char string nested', { o: { a: ['x'.repeat(10_001)] } }],
    ['1,001-element array', { a: Array.from({ length: 1001 }, () => 0) }],
    ['101-property object', { o: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`p${i}`, i])) }],
    ['11 levels', { n: deep }],
    ['1,001 top-level keys', Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`k${i}`, i]))],
    ['email trait over 254', { email: 'a'.repeat(250) + '@x.io' }],
    ['a good and a bad key', { good: 1, 'bad-key': 2 }],
  ];
  for (const [what, traits] of cases) {
    const userId = `tv-${what.replace(/\W+/g, '_')}`;
    const r = await identify(k.all, { userId, traits });
    keyError(t, r, 400, 'INVALID_TRAITS');
    t.equal(r.status, 400, what);
    await notStored(t, k.read, userId, what);
  }

  // Through POST /people and /people/upsert too, and an existing person keeps their traits.
  await identify(k.all, { userId: 'tv-existing', traits: { keep: 1 } });
  for (const path of ['/people', '/people/upsert', '/identify']) {
    const r = await s.req('POST', path, { token: k.all, body: { userId: 'tv-existing', traits: { keep: 2, 'x.y': 1 } } });
    keyError(t, r, 400, 'INVALID_TRAITS');
  }
  t.same((await getPerson(k.read, 'tv-existing')).body.person.traits, { keep: 1 }, 'existing traits unchanged');

  // The limits themselves are accepted.
  const edge = await identify(k.all, {
    userId: 'tv-edge',
    traits: {
      ['k'.repeat(255)]: 'x'.repeat(10_000),
      arr: Array.from({ length: 1000 }, (_, i) => i),
      obj: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, i])),
      n: (() => {
        let v: unknown = 1;
        for (let i = 0; i < 10; i++) v = { n: v };
        return v;
      })(),
    },
  });
  t.equal(edge.status, 200, `limits are inclusive: ${edge.text.slice(0, 300)}`);
});

t.test('identify: traits merge; new values win, old keys stay, null is stored', async (t) => {
  const k = await setup();
  await identify(k.all, { userId: 'merge', traits: { a: 1, b: 'old', c: 'keep-me', nested: { x: 1, y: 1 } } });
  const r = await identify(k.all, { userId: 'merge', traits: { b: 'new', c: null, d: [1, 2], nested: { y: 2 } } });
  t.equal(r.status, 200);
  const expected = { a: 1, b: 'new', c: null, d: [1, 2], nested: { y: 2 } };
  t.same(r.body.person.traits, expected, 'echo shows the merged traits');
  const g = await getPerson(k.read, 'merge');
  t.same(g.body.person.traits, expected, 'stored merged traits');
  t.ok('c' in g.body.person.traits, 'null keeps the key');
  t.equal(g.body.person.traits.c, null);

  // Identify without traits leaves them alone.
  await identify(k.all, { userId: 'merge', email: 'm@example.com' });
  t.same((await getPerson(k.read, 'merge')).body.person.traits, expected);
});

t.test('identify: concurrent identifies of one new userId make one person with every trait', async (t) => {
  const k = await setup();
  const rs = await Promise.all(Array.from({ length: 10 }, (_, i) => identify(k.all, { userId: 'concurrent', traits: { [`k${i}`]: i } })));
  for (const r of rs) t.equal(r.status, 200, r.text.slice(0, 200));
  t.equal(new Set(rs.map((r) => r.body.person.id)).size, 1, 'one person id in every echo');
  const g = await getPerson(k.read, 'concurrent');
  t.same(g.body.person.traits, Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, i])), 'no write lost');
  t.equal((await s.req('GET', '/people', { token: k.read })).body.total, 1);
});

t.test('identify: a crowd at once (known and new people, fields sent and not) each write their own person', async (t) => {
  const k = await setup();
  const users = Array.from({ length: 12 }, (_, i) => `crowd-${i}`);
  // The first six are known beforehand, with an email to keep.
  for (const u of users.slice(0, 6)) t.equal((await identify(k.all, { userId: u, email: `${u}@old.example`, traits: { before: true } })).status, 200);
  const known = new Map(await Promise.all(users.slice(0, 6).map(async (u) => [u, (await getPerson(k.read, u)).body.person.id as string] as const)));
  // Sent together: one group commit (one statement updates the known, inserts the new).
  const rs = await Promise.all(users.map((u, i) => identify(k.all, { userId: u, traits: { i }, ...(i % 2 ? { email: `${u}@new.example` } : {}) })));
  for (const [i, r] of rs.entries()) {
    t.equal(r.status, 200, r.text.slice(0, 200));
    t.equal(r.body.person.userId, users[i], `echo ${i} is its own person`);
    if (i < 6) t.equal(r.body.person.id, known.get(users[i]!), `${users[i]}: the known person, not a new one`);
  }
  for (const [i, u] of users.entries()) {
    const p = (await getPerson(k.read, u)).body.person;
    t.same(p.traits, i < 6 ? { before: true, i } : { i }, `${u}: traits merged`);
    t.equal(p.email, i % 2 ? `${u}@new.example` : i < 6 ? `${u}@old.example` : null, `${u}: email set when sent, kept when not`);
  }
  t.equal((await s.req('GET', '/people', { token: k.read })).body.total, 12, 'twelve people, none twice');
});

t.test('identify: dedicated trait keys set the person fields', async (t) => {
  const k = await setup();
  const traits = { email: 'ded@example.com', phone: '+15559990000', first_name: 'Ada', last_name: 'Lovelace', timezone: 'Europe/Paris', locale: 'fr-FR', plan: 'pro' };
  const r = await identify(k.all, { userId: 'ded', traits });
  t.equal(r.status, 200, r.text);
  t.equal(r.body.person.email, 'ded@example.com', 'email from traits on the key person');
  t.equal(r.body.person.phone, '+15559990000', 'phone from traits on the key person');
  const g = await getPerson(k.read, 'ded');
  t.equal(g.body.person.email, 'ded@example.com');
  t.equal(g.body.person.phone, '+15559990000');

  const d = await dashboardList(k.ws, 'search=ded%40example.com');
  t.equal(d.status, 200, d.text);
  t.equal(d.body.people.length, 1);
  const p = d.body.people[0];
  for (const f of DASHBOARD_FIELDS) t.ok(f in p, `dashboard person has ${f}`);
  t.equal(p.id, g.body.person.id);
  t.equal(p.workspace_id, k.ws.id);
  t.equal(p.external_id, 'ded');
  t.equal(p.email, 'ded@example.com');
  t.equal(p.phone, '+15559990000');
  t.equal(p.first_name, 'Ada');
  t.equal(p.last_name, 'Lovelace');
  t.equal(p.timezone, 'Europe/Paris');
  t.equal(p.locale, 'fr-FR');
  t.equal(p.status, 'active');
  t.equal(p.attributes.plan, 'pro', 'traits appear under attributes');
  for (const f of ['created_at', 'updated_at', 'first_seen_at', 'last_seen_at']) t.match(p[f], ISO_MS, `${f} ISO 8601 with ms`);

  // Later writes through every path update the dedicated fields.
  const up = await s.req('POST', '/people/upsert', { token: k.write, body: { userId: 'ded', traits: { first_name: 'Grace' } } });
  t.equal(up.status, 201);
  const put = await s.req('PUT', '/people/ded', { token: k.write, body: { traits: { last_name: 'Hopper', locale: 'en-US' } } });
  t.equal(put.status, 200);
  const d2 = await dashboardList(k.ws, 'search=ded%40example.com');
  t.equal(d2.body.people[0].first_name, 'Grace', 'upsert traits set first_name');
  t.equal(d2.body.people[0].last_name, 'Hopper', 'PUT traits set last_name');
  t.equal(d2.body.people[0].locale, 'en-US');
  t.equal(d2.body.people[0].timezone, 'Europe/Paris', 'untouched fields kept');

  // A top-level email sets the field as well.
  await identify(k.all, { userId: 'ded', email: 'top@example.com' });
  t.equal((await getPerson(k.read, 'ded')).body.person.email, 'top@example.com', 'top-level email sets the field');
});

t.test('PUT /people/{id}: merges traits, 200 {message}; empty email/phone clear', async (t) => {
  const k = await setup();
  await identify(k.all, { userId: 'put', email: 'put@example.com', phone: '+1555', traits: { a: 1, b: 1 } });
  const r = await s.req('PUT', '/people/put', { token: k.write, body: { traits: { b: 2, c: null, email: '' } } });
  t.equal(r.status, 200, r.text);
  t.type(r.body.message, 'string', 'a message');
  t.notOk('person' in r.body, 'not the person');
  t.notOk('traits' in r.body, 'no traits echoed');
  t.notOk(r.text.includes('put@example.com'), 'no person fields echoed');
  const g = await getPerson(k.read, 'put');
  t.equal(g.body.person.email, null, "email '' clears the email");
  t.equal(g.body.person.phone, '+1555', 'phone untouched');
  t.equal(g.body.person.traits.a, 1);
  t.equal(g.body.person.traits.b, 2);
  t.ok('c' in g.body.person.traits, 'null stored');
  t.equal(g.body.person.traits.c, null);

  const r2 = await s.req('PUT', '/people/put', { token: k.write, body: { traits: { phone: '' } } });
  t.equal(r2.status, 200);
  t.equal((await getPerson(k.read, 'put')).body.person.phone, null, "phone '' clears the phone");

  const r3 = await s.req('PUT', '/people/put', { token: k.write, body: { traits: { email: 'again@example.com' } } });
  t.equal(r3.status, 200);
  t.equal((await getPerson(k.read, 'put')).body.person.email, 'again@example.com', 'email set by PUT traits');

  // Validation.
  badRequest(t, await s.req('PUT', '/people/put', { token: k.write, body: {} }), 'traits');
  badRequest(t, await s.req('PUT', '/people/put', { token: k.write, body: { traits: [1] } }), 'traits');
  keyError(t, await s.req('PUT', '/people/put', { token: k.write, body: { traits: { 'bad key': 1, a: 99 } } }), 400, 'INVALID_TRAITS');
  keyError(t, await s.req('PUT', '/people/put', { token: k.write, body: { traits: { id: 'x' } } }), 400, 'INVALID_TRAITS');
  t.equal((await getPerson(k.read, 'put')).body.person.traits.a, 1, 'a rejected update changed nothing');

  // Permissions.
  const f = await s.req('PUT', '/people/put', { token: k.read, body: { traits: { a: 5 } } });
  t.equal(f.status, 403);
  t.same(f.body, FORBIDDEN);
});

t.test('unknown userId: GET and PUT are 404 PERSON_NOT_FOUND', async (t) => {
  const k = await setup();
  keyError(t, await getPerson(k.read, 'nobody'), 404, 'PERSON_NOT_FOUND');
  keyError(t, await s.req('PUT', '/people/nobody', { token: k.write, body: { traits: { a: 1 } } }), 404, 'PERSON_NOT_FOUND');
  await notStored(t, k.read, 'nobody', 'PUT of an unknown person creates nobody');
  keyError(t, await s.req('DELETE', '/people/nobody', { token: k.del }), 404, 'PERSON_NOT_FOUND');
  // The id is the external userId, never the UUID.
  const r = await identify(k.all, { userId: 'by-external' });
  keyError(t, await getPerson(k.read, r.body.person.id), 404, 'PERSON_NOT_FOUND');
});

t.test('POST /people and /people/upsert: 201 on create and update, keyed only on userId', async (t) => {
  const k = await setup();
  for (const path of ['/people', '/people/upsert']) {
    const userId = `up${path.replace(/\W/g, '-')}`;
    const c = await s.req('POST', path, { token: k.all, body: { userId, email: `${userId}@example.com`, traits: { a: 1 } } });
    t.equal(c.status, 201, `${path} create: ${c.text}`);
    t.equal(c.body.success, true);
    t.notOk(c.text.includes('was_created'), 'no was_created flag');
    t.same(sorted(Object.keys(c.body.person)), KEY_PERSON_FIELDS, 'full person with people:read');
    t.equal(c.body.person.status, 'active');
    const u = await s.req('POST', path, { token: k.all, body: { user_id: userId, traits: { b: 2 } } });
    t.equal(u.status, 201, `${path} update is 201 too`);
    t.notOk(u.text.includes('was_created'), 'no was_created flag on update');
    t.equal(u.body.person.id, c.body.person.id, 'same person');
    t.same(u.body.person.traits, { a: 1, b: 2 }, 'the full merged person');
    t.equal(u.body.person.email, `${userId}@example.com`);

    const w = await s.req('POST', path, { token: k.write, body: { external_id: userId, traits: { c: 3 } } });
    t.equal(w.status, 201);
    t.same(w.body, { success: true, person: { id: c.body.person.id, workspace_id: k.ws.id, userId } }, 'trimmed without people:read');

    badRequest(t, await s.req('POST', path, { token: k.all, body: { email: 'no-id@example.com' } }), 'userId');
    keyError(t, await s.req('POST', path, { token: k.all, body: { userId: 'x1', user_id: 'x2' } }), 400, 'IDENTIFIER_CONFLICT');
    const anon = await s.req('POST', path, { token: k.all, body: { userId: 'x3', anonymousId: 'z'.repeat(37) } });
    t.equal(anon.status, 400);
    t.equal(anon.body.error, 'Anonymous ID must be 36 characters or less');
    await notStored(t, k.read, 'x3', `${path} anonymousId of 37`);

    const idOnly = await newKey(s, k.ws, { permissions: ['people:identify'] });
    const f = await s.req('POST', path, { token: idOnly.key, body: { userId: 'x4' } });
    t.equal(f.status, 403, `${path} needs people:write`);
    t.same(f.body, FORBIDDEN);
  }

  // Never keyed on email: two userIds with one email are two people.
  const a = await s.req('POST', '/people/upsert', { token: k.all, body: { userId: 'same-mail-1', email: 'shared@example.com' } });
  const b = await s.req('POST', '/people/upsert', { token: k.all, body: { userId: 'same-mail-2', email: 'shared@example.com' } });
  t.equal(a.status, 201);
  t.equal(b.status, 201);
  t.not(a.body.person.id, b.body.person.id, 'two people');
  t.equal(b.body.person.userId, 'same-mail-2');
  const found = await s.req('GET', '/people/search?q=shared%40example.com', { token: k.read });
  t.equal(found.body.total, 2, 'both stored');
  t.equal((await getPerson(k.read, 'same-mail-1')).body.person.email, 'shared@example.com');
});

t.test('a key cannot write consent state', async (t) => {
  const k = await setup();
  const r = await identify(k.all, { userId: 'consent-key', status: 'unsubscribed', unsubscribed_at: new Date().toISOString(), unsubscribe_reason: 'x' });
  if (r.status === 200) t.equal(r.body.person.status, 'active', 'status ignored');
  else t.equal(r.status, 400, 'or refused');
  const g = await getPerson(k.read, 'consent-key');
  if (g.status === 200) {
    t.equal(g.body.person.status, 'active');
    t.notOk('unsubscribe_reason' in g.body.person);
  }
  await identify(k.all, { userId: 'consent-key2' });
  await s.req('PUT', '/people/consent-key2', { token: k.all, body: { traits: { status: 'unsubscribed' } } });
  const g2 = await getPerson(k.read, 'consent-key2');
  t.equal(g2.body.person.status, 'active', 'a trait named status is only a trait');
  t.equal(g2.body.person.traits.status, 'unsubscribed');
});

// ---------------------------------------------------------------------------------------
// DELETE /people/{id}

t.test('DELETE /people/{id}: 200, then 404; devices go with the person', async (t) => {
  const k = await setup();
  await identify(k.all, { userId: 'del', traits: { a: 1 } });
  const dev = await s.req('POST', '/people/del/devices', { token: k.all, body: { token: 'del-device-token-1', platform: 'android' } });
  t.equal(dev.status, 201, dev.text);
  t.notOk('person_created' in dev.body, 'person existed');

  const f = await s.req('DELETE', '/people/del', { token: k.write });
  t.equal(f.status, 403, 'people:write cannot delete');
  t.same(f.body, FORBIDDEN);
  const f2 = await s.req('DELETE', '/people/del', { token: k.read });
  t.equal(f2.status, 403, 'people:read cannot delete');

  const r = await s.req('DELETE', '/people/del', { token: k.del });
  t.equal(r.status, 200, r.text);
  t.type(r.body.message, 'string');
  keyError(t, await getPerson(k.read, 'del'), 404, 'PERSON_NOT_FOUND');
  const again = await s.req('DELETE', '/people/del', { token: k.del });
  t.equal(again.status, 404, 'deleting again is 404');
  t.equal(again.body.success, false);
  const devs = await s.req('GET', '/people/del/devices', { token: k.all });
  t.equal(devs.status, 404, 'no person, no devices');
  const unreg = await s.req('DELETE', '/people/del/devices', { token: k.all, body: { token: 'del-device-token-1' } });
  t.equal(unreg.status, 404, 'the token is no longer registered for them');

  const re = await s.req('POST', '/people/del/devices', { token: k.all, body: { token: 'del-device-token-1', platform: 'android' } });
  t.equal(re.status, 201, `re-registering creates a fresh record: ${re.text}`);
  t.equal(re.body.person_created, true, 'a fresh person');
  t.not(re.body.device_id, dev.body.device_id, 'a fresh device');
  const g = await getPerson(k.read, 'del');
  t.equal(g.status, 200);
  t.same(g.body.person.traits, {}, 'the fresh person has no old traits');
  const list = await s.req('GET', '/people/del/devices', { token: k.all });
  t.equal(list.body.count, 1);
  t.equal(list.body.devices[0].registration_count, 1, 'old registration gone');
  t.equal(list.body.devices[0].person_id, g.body.person.id);
});

// ---------------------------------------------------------------------------------------
// GET /people

t.test('GET /people: default 50, max 500, total is the workspace count, offset pages', async (t) => {
  const k = await setup();
  const ids = await many(k, 60);
  const r = await s.req('GET', '/people', { token: k.read });
  t.equal(r.status, 200, r.text.slice(0, 300));
  t.equal(r.body.people.length, 50, 'default limit 50');
  t.equal(r.body.limit, 50);
  t.equal(r.body.offset, 0);
  t.equal(r.body.total, 60, 'total is the workspace count');
  for (const p of r.body.people) {
    t.same(sorted(Object.keys(p)), KEY_PERSON_FIELDS, 'key person fields');
    t.equal(p.workspace_id, k.ws.id);
  }

  const big = await s.req('GET', '/people?limit=501', { token: k.read });
  t.equal(big.status, 200, 'limit above 500 is not an error');
  t.equal(big.body.limit, 500, 'silently reduced to 500');
  t.equal(big.body.people.length, 60);
  const huge = await s.req('GET', '/people?limit=100000', { token: k.read });
  t.equal(huge.body.limit, 500);
  const exact = await s.req('GET', '/people?limit=500', { token: k.read });
  t.equal(exact.body.limit, 500);

  const seen: string[] = [];
  for (const offset of [0, 25, 50]) {
    const p = await s.req('GET', `/people?limit=25&offset=${offset}`, { token: k.read });
    t.equal(p.status, 200);
    t.equal(p.body.limit, 25);
    t.equal(p.body.offset, offset);
    t.equal(p.body.total, 60);
    t.equal(p.body.people.length, offset === 50 ? 10 : 25, `page at ${offset}`);
    seen.push(...p.body.people.map((x: { userId: string }) => x.userId));
  }
  t.equal(new Set(seen).size, 60, 'pages do not overlap');
  t.same(sorted(seen), sorted(ids), 'pages cover everyone');
  const past = await s.req('GET', '/people?offset=60', { token: k.read });
  t.same(past.body.people, [], 'past the end: empty page');
  t.equal(past.body.total, 60);

  for (const q of ['limit=-1', 'offset=-1', 'limit=1.5', 'offset=2.5', 'limit=abc', 'offset=x']) {
    badRequest(t, await s.req('GET', `/people?${q}`, { token: k.read }));
  }

  const f = await s.req('GET', '/people', { token: k.write });
  t.equal(f.status, 403, 'people:write cannot list');
  t.same(f.body, FORBIDDEN);
});

// ---------------------------------------------------------------------------------------
// GET /people/search

t.test('GET /people/search: q and search, case-insensitive substrings, literal % and _', async (t) => {
  const k = await setup();
  const people = [
    { userId: 'Alice.Smith', email: 'alice@example.com' },
    { userId: 'bob', email: 'BOB@Example.org' },
    { userId: 'percent%user', email: 'pct@test.net' },
    { userId: 'percentXuser', email: 'pctx@test.net' },
    { userId: 'under_score', email: 'us@test.net' },
    { userId: 'underXscore', email: 'ux@test.net' },
    { userId: 'back\\slash', email: 'bs@test.net' },
  ];
  for (const p of people) t.equal((await identify(k.all, p)).status, 200);
  const search = async (query: string) => {
    const r = await s.req('GET', `/people/search?${query}`, { token: k.read });
    t.equal(r.status, 200, `${query}: ${r.text.slice(0, 200)}`);
    return r;
  };
  const ids = (r: Res) => sorted(r.body.people.map((p: { userId: string }) => p.userId));

  const a = await search('q=alice');
  t.same(ids(a), ['Alice.Smith'], 'userId/email substring');
  t.equal(a.body.total, 1);
  t.equal(a.body.limit, 50);
  t.equal(a.body.offset, 0);
  t.same(sorted(Object.keys(a.body.people[0])), KEY_PERSON_FIELDS);
  t.same(ids(await search('q=ALICE.S')), ['Alice.Smith'], 'userId, case-insensitive');
  t.same(ids(await search('q=example')), ['Alice.Smith', 'bob'], 'email, case-insensitive');
  t.same(ids(await search('q=EXAMPLE.ORG')), ['bob'], 'email substring');
  t.same(ids(await search(`q=${enc('%')}`)), ['percent%user'], '% is literal');
  t.same(ids(await search(`q=${enc('t%u')}`)), ['percent%user'], '% inside the text is literal');
  t.same(ids(await search('q=_')), ['under_score'], '_ is literal');
  t.same(ids(await search('q=r_s')), ['under_score'], '_ does not match any character');
  t.same(ids(await search(`q=${enc('\\')}`)), ['back\\slash'], 'a backslash is literal');
  t.same(ids(await search('q=nobody-matches')), [], 'no match');

  t.same(ids(await search('search=bob')), ['bob'], 'search is an alias of q');
  t.same(ids(await search('q=alice&search=bob')), ['Alice.Smith'], 'q wins over search');
  t.same(ids(await search('search=bob&q=alice')), ['Alice.Smith'], 'q wins, whatever the order');

  const all = await search('');
  t.equal(all.body.total, 7, 'no q: the whole workspace');
  t.equal(all.body.people.length, 7);
  const page = await search('limit=2&offset=2');
  t.equal(page.body.total, 7, 'total counts every match');
  t.equal(page.body.people.length, 2);
  t.equal(page.body.limit, 2);
  t.equal(page.body.offset, 2);
  const page2 = await search('limit=4&offset=4');
  t.equal(page2.body.people.length, 3, 'last page');
  const big = await search('limit=1000');
  t.equal(big.body.limit, 500, 'limit above 500 reduced');
  for (const q of ['limit=-1', 'offset=-2', 'limit=0.5']) badRequest(t, await s.req('GET', `/people/search?${q}`, { token: k.read }));

  // Status filter.
  const bob = (await getPerson(k.read, 'bob')).body.person;
  t.equal((await patchPerson(k.ws, bob.id, { status: 'unsubscribed' })).status, 200);
  t.same(ids(await search('status=unsubscribed')), ['bob'], 'status=unsubscribed');
  const active = await search('status=active');
  t.equal(active.body.total, 6, 'status=active excludes bob');
  t.notOk(ids(active).includes('bob'));
  t.same(ids(await search('status=unsubscribed&q=example')), ['bob'], 'status with q');
  t.same(ids(await search('status=active&q=example')), ['Alice.Smith'], 'status and q both apply');
  t.same(ids(await search('status=bounced')), [], 'nobody bounced');
  badRequest(t, await s.req('GET', '/people/search?status=deleted', { token: k.read }), 'status');

  const f = await s.req('GET', '/people/search?q=bob', { token: k.write });
  t.equal(f.status, 403);
  t.same(f.body, FORBIDDEN);
});

// ---------------------------------------------------------------------------------------
// POST /people/batch

t.test('POST /people/batch: per-entry results, failures only fail themselves', async (t) => {
  const k = await setup();
  const r = await s.req('POST', '/people/batch', {
    token: k.write,
    body: {
      identify: [
        { userId: 'b-0', email: 'b0@example.com', traits: { plan: 'pro' } },
        { email: 'no-id@example.com' },
        { user_id: 'b-2', traits: { 'bad-key': 1 } },
        { external_id: 'b-3', phone: '+1555' },
        { userId: 'b-4', user_id: 'b-4x' },
        { userId: 'b-5', anonymousId: 'a'.repeat(37) },
        { userId: 'b-6', email: 'not-an-email' },
        { userId: 'b-7', traits: { id: 1 } },
        { userId: 'b-8', traits: { s: 'x'.repeat(10_001) } },
        { userId: 'b-0', traits: { second: true } },
      ],
    },
  });
  t.equal(r.status, 200, r.text.slice(0, 500));
  t.equal(r.body.total, 10, 'total is the number submitted');
  t.equal(r.body.results.length, 10, 'one result per entry');
  const okAt = [0, 3, 9];
  r.body.results.forEach((res: Record<string, unknown>, i: number) => {
    t.equal(res.type, 'identify', `#${i} type`);
    t.equal(res.index, i, `#${i} index`);
    if (okAt.includes(i)) {
      t.equal(res.success, true, `#${i} succeeds`);
      t.notOk('error' in res, `#${i} has no error`);
      t.same(sorted(Object.keys(res.data as object)), KEY_PERSON_FIELDS, `#${i} data is the full person, even without people:read`);
    } else {
      t.equal(res.success, false, `#${i} fails: ${JSON.stringify(res)}`);
      t.ok(res.error, `#${i} carries an error`);
      t.notOk('data' in res, `#${i} has no data`);
    }
  });
  const d0 = r.body.results[0].data;
  t.equal(d0.userId, 'b-0');
  t.equal(d0.email, 'b0@example.com');
  t.same(d0.traits, { plan: 'pro' });
  t.equal(d0.status, 'active');
  t.equal(r.body.results[3].data.userId, 'b-3');
  t.equal(r.body.results[3].data.phone, '+1555');
  t.same(r.body.results[9].data.traits, { plan: 'pro', second: true }, 'a later entry merges into an earlier one');
  t.equal(r.body.results[9].data.id, d0.id);

  for (const id of ['b-2', 'b-4', 'b-4x', 'b-5', 'b-6', 'b-7', 'b-8']) await notStored(t, k.read, id, `failed entry ${id}`);
  t.equal((await getPerson(k.read, 'b-3')).status, 200, 'good entries stored');
  const list = await s.req('GET', '/people', { token: k.read });
  t.equal(list.body.total, 2, 'exactly the two good people');

  const idk = await newKey(s, k.ws, { permissions: ['people:identify'] });
  const f = await s.req('POST', '/people/batch', { token: idk.key, body: { identify: [{ userId: 'b-x' }] } });
  t.equal(f.status, 403);
  t.same(f.body, FORBIDDEN);
});

t.test('POST /people/batch: an entry that is not an object fails only itself', async (t) => {
  const k = await setup();
  const r = await s.req('POST', '/people/batch', { token: k.write, body: { identify: [null, { userId: 'nonobj-ok' }, 'x', 5, []] } });
  t.equal(r.status, 200, `per-item failures arrive inside a 200 (README, Routes): ${r.text.slice(0, 300)}`);
  t.equal(r.body?.total, 5);
  t.same(r.body?.results?.map((x: { index: number; success: boolean }) => [x.index, x.success]), [[0, false], [1, true], [2, false], [3, false], [4, false]]);
  t.equal((await getPerson(k.read, 'nonobj-ok')).status, 200, 'the good entry is stored');
});

t.test('POST /people/batch: 1,000 entries ok, 1,001 is 400 BATCH_TOO_LARGE before processing', async (t) => {
  const k = await setup();
  const over = Array.from({ length: 1001 }, (_, i) => ({ userId: `big-${i}` }));
  const r = await s.req('POST', '/people/batch', { token: k.write, body: { identify: over } });
  keyError(t, r, 400, 'BATCH_TOO_LARGE');
  await notStored(t, k.read, 'big-0', 'oversized batch');
  t.equal((await s.req('GET', '/people', { token: k.read })).body.total, 0, 'nobody written');

  const max = Array.from({ length: 1000 }, (_, i) => ({ userId: `max-${i}` }));
  const ok = await s.req('POST', '/people/batch', { token: k.write, body: { identify: max } });
  t.equal(ok.status, 200, ok.text.slice(0, 300));
  t.equal(ok.body.total, 1000);
  t.equal(ok.body.results.filter((x: { success: boolean }) => x.success).length, 1000);
  t.equal((await s.req('GET', '/people', { token: k.read })).body.total, 1000);
});

t.test('POST /people/batch: a track array is 400; body shape is checked', async (t) => {
  const k = await setup();
  const withTrack = await s.req('POST', '/people/batch', { token: k.write, body: { identify: [{ userId: 'tr-1' }], track: [{ event: 'x', userId: 'tr-1' }] } });
  t.equal(withTrack.status, 400, withTrack.text);
  const onlyTrack = await s.req('POST', '/people/batch', { token: k.write, body: { track: [{ event: 'x', userId: 'tr-2' }] } });
  t.equal(onlyTrack.status, 400, onlyTrack.text);
  await notStored(t, k.read, 'tr-1', 'batch with a track array');
  await notStored(t, k.read, 'tr-2', 'track-only batch');

  badRequest(t, await s.req('POST', '/people/batch', { token: k.write, body: {} }), 'identify');
  badRequest(t, await s.req('POST', '/people/batch', { token: k.write, body: { identify: { userId: 'x' } } }), 'identify');
  const empty = await s.req('POST', '/people/batch', { token: k.write, body: { identify: [] } });
  t.equal(empty.status, 200, 'an empty batch is fine');
  t.same(empty.body.results, []);
  t.equal(empty.body.total, 0);
});

t.test('POST /people/batch: a body over 1 MB is 413', async (t) => {
  const k = await setup();
  const body = { identify: [{ userId: 'huge', traits: { a: 'x'.repeat(9000) } }, ...Array.from({ length: 120 }, (_, i) => ({ userId: `huge-${i}`, traits: { a: 'x'.repeat(9000) } }))] };
  t.ok(JSON.stringify(body).length > 1024 * 1024, 'body is over 1 MB');
  const r = await s.req('POST', '/people/batch', { token: k.write, body }).catch((err: Error) => ({ status: -1, text: err.message, body: undefined }) as unknown as Res);
  t.equal(r.status, 413, r.text.slice(0, 200));
  t.equal(r.body?.code, 'PAYLOAD_TOO_LARGE');
  t.equal(r.body?.success, false);
  await notStored(t, k.read, 'huge', 'oversized body');
});

// ---------------------------------------------------------------------------------------
// Workspace isolation

t.test("one workspace's people are invisible to another workspace's key", async (t) => {
  const a = await setup();
  const b = await setup();
  const created = await identify(a.all, { userId: 'iso', email: 'iso@example.com', traits: { owner: 'a' } });
  t.equal(created.status, 200);

  keyError(t, await getPerson(b.all, 'iso'), 404, 'PERSON_NOT_FOUND');
  keyError(t, await s.req('PUT', '/people/iso', { token: b.all, body: { traits: { owner: 'b' } } }), 404, 'PERSON_NOT_FOUND');
  const del = await s.req('DELETE', '/people/iso', { token: b.all });
  t.equal(del.status, 404, 'DELETE from another workspace');
  const sr = await s.req('GET', '/people/search?q=iso', { token: b.all });
  t.equal(sr.body.total, 0, 'search in another workspace');
  t.same(sr.body.people, []);
  const ls = await s.req('GET', '/people', { token: b.all });
  t.equal(ls.body.total, 0, 'list in another workspace');

  const still = await getPerson(a.read, 'iso');
  t.equal(still.status, 200, 'still there');
  t.same(still.body.person.traits, { owner: 'a' }, 'unchanged');

  // The same userId in workspace B is a different person.
  const other = await identify(b.all, { userId: 'iso', traits: { owner: 'b' } });
  t.equal(other.status, 200);
  t.not(other.body.person.id, created.body.person.id);
  t.equal(other.body.person.workspace_id, b.ws.id);
  t.same((await getPerson(a.read, 'iso')).body.person.traits, { owner: 'a' }, "A's person untouched");

  // Dashboard: B's owner cannot see A's people; A's person UUID is unknown in B.
  const forbidden = await dashboardList(a.ws, '', b.ws.token);
  t.equal(forbidden.status, 403);
  const patch = await patchPerson(b.ws, created.body.person.id, { status: 'unsubscribed' });
  sessionError(t, patch, 404, 'PERSON_NOT_FOUND');
  t.equal((await getPerson(a.read, 'iso')).body.person.status, 'active');
});

// ---------------------------------------------------------------------------------------
// Anonymous merge

t.test('anonymous merge: the anonymous person folds into the identified one', async (t) => {
  const k = await setup();
  const anon = await identify(k.all, { userId: 'anon-xyz', traits: { a: 1, b: 1 } });
  t.equal(anon.status, 200);
  const dev = await s.req('POST', '/people/anon-xyz/devices', { token: k.all, body: { token: 'anon-device-token-0001', platform: 'ios' } });
  t.equal(dev.status, 201, dev.text);

  const r = await identify(k.all, { userId: 'u-1', anonymousId: 'anon-xyz', traits: { b: 2 } });
  t.equal(r.status, 200, r.text);
  t.equal(r.body.person.userId, 'u-1');

  const gone = await eventually(async () => (await getPerson(k.read, 'anon-xyz')).status === 404);
  t.ok(gone, 'the anonymous person is deleted');
  const u = await getPerson(k.read, 'u-1');
  t.equal(u.status, 200);
  t.same(u.body.person.traits, { a: 1, b: 2 }, "traits merged, the identified person's values win");
  t.equal(u.body.person.id, r.body.person.id);

  const devices = await s.req('GET', '/people/u-1/devices', { token: k.all });
  t.equal(devices.status, 200, devices.text);
  t.equal(devices.body.count, 1);
  t.equal(devices.body.devices[0].device_token, 'anon-device-token-0001', 'the device moved over');
  t.equal(devices.body.devices[0].id, dev.body.device_id);
  t.equal(devices.body.devices[0].person_id, u.body.person.id);
  t.equal((await s.req('GET', '/people/anon-xyz/devices', { token: k.all })).status, 404);

  // A merge never reaches into another workspace.
  const other = await setup();
  await identify(other.all, { userId: 'anon-abc', traits: { elsewhere: true } });
  await identify(k.all, { userId: 'anon-abc', traits: { here: true } });
  t.equal((await identify(k.all, { userId: 'u-3', anonymousId: 'anon-abc' })).status, 200);
  t.ok(await eventually(async () => (await getPerson(k.read, 'anon-abc')).status === 404), 'merged in this workspace');
  const kept = await getPerson(other.read, 'anon-abc');
  t.equal(kept.status, 200, "the other workspace's person with that id is untouched");
  t.same(kept.body.person.traits, { elsewhere: true });
  t.same((await getPerson(k.read, 'u-3')).body.person.traits, { here: true }, "only this workspace's traits merged");
  await s.req('DELETE', '/people/u-3', { token: k.del });

  // An anonymousId nobody used merges nothing and deletes nobody.
  await identify(k.all, { userId: 'bystander' });
  const r2 = await identify(k.all, { userId: 'u-2', anonymousId: 'never-seen', traits: { z: 1 } });
  t.equal(r2.status, 200);
  const ok = await eventually(async () => (await getPerson(k.read, 'u-2')).body?.person?.traits?.z === 1);
  t.ok(ok);
  t.equal((await getPerson(k.read, 'bystander')).status, 200, 'others untouched');
  t.equal((await s.req('GET', '/people', { token: k.read })).body.total, 3, 'u-1, bystander, u-2');
});

// ---------------------------------------------------------------------------------------
// Dashboard people (session)

t.test('dashboard: GET /workspaces/{id}/people lists, filters and searches', async (t) => {
  const k = await setup();
  const defs = [
    { userId: 'd-ada', email: 'ada@analytical.io', traits: { first_name: 'Ada', last_name: 'Lovelace' } },
    { userId: 'd-grace', email: 'grace@navy.mil', traits: { first_name: 'Grace', last_name: 'Hopper' } },
    { userId: 'd-alan', email: 'alan@bletchley.uk', traits: { first_name: 'Alan', last_name: 'Turing' } },
    { userId: 'd-edsger', email: 'ewd@utexas.edu', traits: { first_name: 'Edsger', last_name: 'Dijkstra' } },
  ];
  const uuid: Record<string, string> = {};
  for (const d of defs) uuid[d.userId] = (await identify(k.all, d)).body.person.id;

  const r = await dashboardList(k.ws);
  t.equal(r.status, 200, r.text.slice(0, 300));
  t.equal(r.body.total, 4);
  t.equal(r.body.people.length, 4);
  t.equal(r.body.offset, 0);
  t.type(r.body.limit, 'number');
  for (const p of r.body.people) for (const f of DASHBOARD_FIELDS) t.ok(f in p, `has ${f}`);

  const capped = await dashboardList(k.ws, 'limit=500');
  t.equal(capped.status, 200);
  t.equal(capped.body.limit, 100, 'limit max 100');
  const page = await dashboardList(k.ws, 'limit=2&offset=1');
  t.equal(page.body.people.length, 2);
  t.equal(page.body.total, 4);
  t.equal(page.body.limit, 2);
  t.equal(page.body.offset, 1);
  sessionError(t, await dashboardList(k.ws, 'limit=-1'), 400, 'VALIDATION_ERROR');
  sessionError(t, await dashboardList(k.ws, 'offset=1.5'), 400, 'VALIDATION_ERROR');

  const names = (x: Res) => sorted(x.body.people.map((p: { external_id: string }) => p.external_id));
  t.same(names(await dashboardList(k.ws, 'search=NAVY')), ['d-grace'], 'search by email, case-insensitive');
  t.same(names(await dashboardList(k.ws, 'search=ada')), ['d-ada'], 'search by first name / email');
  t.same(names(await dashboardList(k.ws, 'search=turing')), ['d-alan'], 'search by last name');
  t.same(names(await dashboardList(k.ws, 'search=dijk')), ['d-edsger'], 'last name substring');
  t.same(names(await dashboardList(k.ws, 'search=zzz')), [], 'no match');
  t.same(names(await dashboardList(k.ws, `search=${enc('%')}`)), [], '% is literal');
  t.same(names(await dashboardList(k.ws, 'search=_')), [], '_ is literal');

  // Status filters, suppressed included.
  t.equal((await patchPerson(k.ws, uuid['d-grace']!, { status: 'unsubscribed' })).status, 200);
  t.equal((await patchPerson(k.ws, uuid['d-alan']!, { status: 'bounced' })).status, 200);
  t.equal((await patchPerson(k.ws, uuid['d-edsger']!, { status: 'suppressed' })).status, 200);
  t.same(names(await dashboardList(k.ws, 'status=active')), ['d-ada']);
  t.same(names(await dashboardList(k.ws, 'status=unsubscribed')), ['d-grace']);
  t.same(names(await dashboardList(k.ws, 'status=bounced')), ['d-alan']);
  const sup = await dashboardList(k.ws, 'status=suppressed');
  t.same(names(sup), ['d-edsger'], 'suppressed filter');
  t.equal(sup.body.people[0].status, 'suppressed');
  t.same(names(await dashboardList(k.ws, 'status=unsubscribed&search=grace')), ['d-grace']);
  t.same(names(await dashboardList(k.ws, 'status=active&search=grace')), []);
  sessionError(t, await dashboardList(k.ws, 'status=deleted'), 400, 'VALIDATION_ERROR');

  // Access.
  const stranger = await s.session(uniqueUser('stranger'));
  const f = await dashboardList(k.ws, '', stranger);
  t.equal(f.status, 403, 'a non-member');
  t.same(f.body, FORBIDDEN);
  const withKey = await dashboardList(k.ws, '', k.all);
  t.equal(withKey.status, 403, 'an API key on a session route');
  const noAuth = await s.req('GET', `/workspaces/${k.ws.id}/people`);
  t.equal(noAuth.status, 401);
});

t.test('dashboard: GET /workspaces/{id}/people/stats', async (t) => {
  const k = await setup();
  const empty = await s.req('GET', `/workspaces/${k.ws.id}/people/stats`, { token: k.ws.token });
  t.equal(empty.status, 200, empty.text);
  for (const f of ['total', 'active', 'unsubscribed', 'bounced', 'suppressed', 'recent']) t.equal(empty.body[f], 0, `empty ${f}`);

  const ids: string[] = [];
  for (const u of ['s-1', 's-2', 's-3', 's-4', 's-5']) ids.push((await identify(k.all, { userId: u })).body.person.id);
  await patchPerson(k.ws, ids[0]!, { status: 'unsubscribed' });
  await patchPerson(k.ws, ids[1]!, { status: 'bounced' });
  await patchPerson(k.ws, ids[2]!, { status: 'suppressed' });
  const r = await s.req('GET', `/workspaces/${k.ws.id}/people/stats`, { token: k.ws.token });
  t.equal(r.status, 200);
  t.equal(r.body.total, 5);
  t.equal(r.body.active, 2);
  t.equal(r.body.unsubscribed, 1);
  t.equal(r.body.bounced, 1);
  t.equal(r.body.suppressed, 1);
  t.equal(r.body.recent, 5, 'created in the last 7 days');

  // Another workspace's people do not count.
  const other = await setup();
  await identify(other.all, { userId: 'elsewhere' });
  const again = await s.req('GET', `/workspaces/${k.ws.id}/people/stats`, { token: k.ws.token });
  t.equal(again.body.total, 5);

  const stranger = await s.session(uniqueUser('stranger'));
  const f = await s.req('GET', `/workspaces/${k.ws.id}/people/stats`, { token: stranger });
  t.equal(f.status, 403);
  t.same(f.body, FORBIDDEN);
});

t.test('dashboard: PATCH consent racing a delete of the person: 200 or 404, never a 5xx', async (t) => {
  const k = await setup();
  for (let i = 0; i < 30; i++) {
    const userId = `consent-race-${i}`;
    const id = (await identify(k.all, { userId })).body.person.id as string;
    const [patched, deleted] = await Promise.all([patchPerson(k.ws, id, { status: 'unsubscribed' }), s.req('DELETE', `/people/${userId}`, { token: k.del })]);
    t.ok([200, 404].includes(patched.status), `PATCH ${i}: ${patched.status} ${patched.text.slice(0, 200)}`);
    if (patched.status === 404) sessionError(t, patched, 404, 'PERSON_NOT_FOUND');
    t.equal(deleted.status, 200, `delete ${i}`);
  }
});

t.test('dashboard: PATCH consent; the key surface shows it', async (t) => {
  const k = await setup();
  const id = (await identify(k.all, { userId: 'consent', email: 'c@example.com' })).body.person.id;

  const r = await patchPerson(k.ws, id, { status: 'unsubscribed', unsubscribe_reason: 'x' });
  t.equal(r.status, 200, r.text);
  t.equal(r.body.success, true);
  const p = r.body.data.person;
  t.equal(p.id, id);
  t.equal(p.external_id, 'consent');
  t.equal(p.status, 'unsubscribed');
  for (const f of DASHBOARD_FIELDS) t.ok(f in p, `dashboard person has ${f}`);

  const g = await getPerson(k.read, 'consent');
  t.equal(g.body.person.status, 'unsubscribed');
  t.match(g.body.person.unsubscribed_at, ISO_MS, 'unsubscribed_at set');
  t.equal(g.body.person.unsubscribe_reason, 'x');
  const firstAt = g.body.person.unsubscribed_at;

  // Every key read echoes the stored status.
  const l = await s.req('GET', '/people', { token: k.read });
  t.equal(l.body.people[0].status, 'unsubscribed', 'list');
  t.equal(l.body.people[0].unsubscribe_reason, 'x');
  const sr = await s.req('GET', '/people/search?q=consent', { token: k.read });
  t.equal(sr.body.people[0].status, 'unsubscribed', 'search');
  const echo = await identify(k.all, { userId: 'consent', traits: { later: 1 } });
  t.equal(echo.body.person.status, 'unsubscribed', 'identify does not reset consent');
  t.equal(echo.body.person.unsubscribe_reason, 'x');
  const up = await s.req('POST', '/people/upsert', { token: k.all, body: { userId: 'consent' } });
  t.equal(up.body.person.status, 'unsubscribed', 'upsert echo');
  const b = await s.req('POST', '/people/batch', { token: k.write, body: { identify: [{ userId: 'consent' }] } });
  t.equal(b.body.results[0].data.status, 'unsubscribed', 'batch data');
  t.equal(b.body.results[0].data.unsubscribed_at, firstAt);

  // Back to active clears both consent fields.
  const back = await patchPerson(k.ws, id, { status: 'active' });
  t.equal(back.status, 200);
  t.equal(back.body.data.person.status, 'active');
  const g2 = await getPerson(k.read, 'consent');
  t.equal(g2.body.person.status, 'active');
  t.notOk('unsubscribed_at' in g2.body.person, 'unsubscribed_at omitted once cleared');
  t.notOk('unsubscribe_reason' in g2.body.person, 'unsubscribe_reason omitted once cleared');
  t.same(sorted(Object.keys(g2.body.person)), KEY_PERSON_FIELDS);

  // Bounced and suppressed are stored as such.
  for (const status of ['bounced', 'suppressed']) {
    const x = await patchPerson(k.ws, id, { status });
    t.equal(x.status, 200);
    t.equal((await getPerson(k.read, 'consent')).body.person.status, status, `${status} on the key surface`);
  }

  // Errors.
  sessionError(t, await patchPerson(k.ws, randomUUID(), { status: 'active' }), 404, 'PERSON_NOT_FOUND');
  sessionError(t, await patchPerson(k.ws, 'consent', { status: 'active' }), 404, 'PERSON_NOT_FOUND');
  sessionError(t, await patchPerson(k.ws, 'not-a-uuid', { status: 'active' }), 404, 'PERSON_NOT_FOUND');
  sessionError(t, await patchPerson(k.ws, id, { status: 'deleted' }), 400, 'VALIDATION_ERROR');
  sessionError(t, await patchPerson(k.ws, id, {}), 400, 'VALIDATION_ERROR');
  sessionError(t, await patchPerson(k.ws, id, { status: 'unsubscribed', unsubscribe_reason: 'r'.repeat(256) }), 400, 'VALIDATION_ERROR');
  t.equal((await getPerson(k.read, 'consent')).body.person.status, 'suppressed', 'rejected PATCHes changed nothing');

  const stranger = await s.session(uniqueUser('stranger'));
  const f = await patchPerson(k.ws, id, { status: 'active' }, stranger);
  t.equal(f.status, 403, 'a non-member');
  t.same(f.body, FORBIDDEN);
  const withKey = await patchPerson(k.ws, id, { status: 'active' }, k.all);
  t.equal(withKey.status, 403, 'an API key');
  t.equal((await getPerson(k.read, 'consent')).body.person.status, 'suppressed');
});
