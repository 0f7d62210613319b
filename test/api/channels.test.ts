// Push provider credentials (docs/channels.md): PUT/GET /workspaces/{id}/channels/push.
// Never echoed (no response carries any part of a private key), partial updates, removal,
// validation naming the field (keys that do not import, fields of the wrong form, unknown
// fields), roles, keys and other workspaces refused; stored sealed (the table holds no
// plaintext); the key generated in the data dir; credentials sealed under another key shown as
// unreadable until they are set again.
import t, { type Test } from 'tap';
import pg from 'pg';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { newKey, newWorkspace, startServer, storeUrl, uniqueUser, type Res, type TestServer } from '../helpers/server.js';
import { FORBIDDEN, ISO_MS } from '../helpers/assert.js';
import { makeP8 } from '../fakes/fake-apns.js';

/** Every private key the tests made, and every response text received: checked against each other at the end. */
const keysMade: string[] = [];
const answers: string[] = [];
function recording(srv: TestServer): TestServer {
  const req = srv.req;
  srv.req = async (...args) => {
    const r = await req(...args);
    answers.push(r.text);
    return r;
  };
  return srv;
}
const made = (pem: string) => (keysMade.push(pem), pem);
const p8 = () => made(makeP8());

const s: TestServer = recording(await startServer());
t.teardown(() => s.stop());
const sql = new pg.Client({ connectionString: storeUrl(s) });
await sql.connect();
t.teardown(() => sql.end());

const path = (ws: { id: string }) => `/workspaces/${ws.id}/channels/push`;

/** A service-account key file as Google issues it (its token_uri is never called here). */
function serviceAccount(project = 'herald-app') {
  const privateKey = made(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
  return {
    type: 'service_account',
    project_id: project,
    private_key_id: randomBytes(20).toString('hex'),
    private_key: privateKey,
    client_email: `herald@${project}.iam.gserviceaccount.com`,
    client_id: '123456789012345678901',
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: 'https://oauth2.googleapis.com/token',
    auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
    client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/herald%40${project}.iam.gserviceaccount.com`,
    universe_domain: 'googleapis.com',
  };
}

const apns = (over: Record<string, unknown> = {}) => ({ key_p8: p8(), key_id: 'ABC123DEFG', team_id: 'DEF123GHIJ', bundle_id: 'com.example.herald', ...over });

/** The base64 body lines of a PEM: what must never appear anywhere outside the request. */
const pemBody = (pem: string) => pem.split('\n').filter((l) => l.length >= 16 && !l.startsWith('-----'));

function leaksNothing(t: Test, r: Res, ...pems: string[]): void {
  const leaked = pems.flatMap(pemBody).filter((line) => r.text.includes(line));
  t.same(leaked, [], 'no line of a private key in the response');
}

/** A success answer: no key field and no PEM at all. */
function echoesNoKey(t: Test, r: Res, ...pems: string[]): void {
  leaksNothing(t, r, ...pems);
  t.notMatch(r.text, /PRIVATE KEY|"key_p8"|"private_key"/, 'no key field or PEM marker');
}

function sessionError(t: Test, r: Res, status: number, code: string): void {
  t.equal(r.status, status, `status ${status}: ${r.text.slice(0, 400)}`);
  t.equal(r.body?.success, false);
  t.equal(r.body?.error?.code, code);
}

/** A 400 VALIDATION_ERROR whose details name `field`. */
function invalid(t: Test, r: Res, field: string): void {
  sessionError(t, r, 400, 'VALIDATION_ERROR');
  const fields = (r.body?.error?.details ?? []).map((d: { field: string }) => d.field);
  t.ok(fields.includes(field), `details name ${field}: ${JSON.stringify(r.body?.error?.details)}`);
}

const NOTHING = { fcm: { configured: false }, apns: { configured: false } };

t.test('nothing configured: GET says so', async (t) => {
  const ws = await newWorkspace(s, 'Channels empty');
  const r = await s.req('GET', path(ws), { token: ws.token });
  t.equal(r.status, 200, r.text);
  t.same(r.body, { success: true, data: { channels: NOTHING, updated_at: null } });
});

t.test('PUT then GET: which channels are configured with their identifiers, never a key', async (t) => {
  const ws = await newWorkspace(s, 'Channels round trip');
  const sa = serviceAccount();
  const a = apns({ production: true });
  const put = await s.req('PUT', path(ws), { token: ws.token, body: { fcm: { service_account: sa }, apns: a } });
  t.equal(put.status, 200, put.text);
  t.same(put.body.data.channels, {
    fcm: { configured: true, readable: true, project_id: 'herald-app', client_email: sa.client_email, private_key_id: sa.private_key_id, token_uri: sa.token_uri },
    apns: { configured: true, readable: true, key_id: 'ABC123DEFG', team_id: 'DEF123GHIJ', bundle_id: 'com.example.herald', production: true },
  });
  t.match(put.body.data.updated_at, ISO_MS);
  echoesNoKey(t, put, sa.private_key, a.key_p8);
  const get = await s.req('GET', path(ws), { token: ws.token });
  t.equal(get.status, 200);
  t.same(get.body, put.body, 'GET answers what PUT answered');
  echoesNoKey(t, get, sa.private_key, a.key_p8);
});

t.test('stored sealed: the table holds neither the keys nor any other field in plaintext', async (t) => {
  const ws = await newWorkspace(s, 'Channels sealed');
  const sa = serviceAccount('sealed-project');
  const a = apns();
  t.equal((await s.req('PUT', path(ws), { token: ws.token, body: { fcm: { service_account: sa }, apns: a } })).status, 200);
  const { rows } = await sql.query<{ fcm: Buffer; apns: Buffer }>('SELECT fcm, apns FROM push_channels WHERE workspace_id = $1', [ws.id]);
  t.equal(rows.length, 1);
  const row = rows[0]!;
  const der = (pem: string) => Buffer.from(pemBody(pem).join(''), 'base64');
  for (const [name, stored] of [['fcm', row.fcm], ['apns', row.apns]] as const) {
    t.equal(stored[0], 1, `${name}: sealed format version 1`);
    for (const needle of [...pemBody(sa.private_key), ...pemBody(a.key_p8), 'PRIVATE KEY', 'sealed-project', sa.client_email, 'ABC123DEFG', 'com.example.herald']) {
      t.notOk(stored.includes(Buffer.from(needle)), `${name}: no plaintext '${needle.slice(0, 16)}…'`);
    }
    t.notOk(stored.includes(der(sa.private_key).subarray(0, 32)) || stored.includes(der(a.key_p8).subarray(0, 32)), `${name}: no raw key bytes`);
  }
});

t.test('partial updates: a channel omitted stays; APNs fields omitted keep their stored value', async (t) => {
  const ws = await newWorkspace(s, 'Channels partial');
  const sa = serviceAccount('first-project');
  const first = await s.req('PUT', path(ws), { token: ws.token, body: { fcm: { service_account: sa }, apns: apns() } });
  t.equal(first.status, 200, first.text);
  t.equal(first.body.data.channels.apns.production, false, 'production defaults to false');

  const flip = await s.req('PUT', path(ws), { token: ws.token, body: { apns: { production: true } } });
  t.equal(flip.status, 200, flip.text);
  t.same(flip.body.data.channels.apns, { configured: true, readable: true, key_id: 'ABC123DEFG', team_id: 'DEF123GHIJ', bundle_id: 'com.example.herald', production: true }, 'only production changed');
  t.same(flip.body.data.channels.fcm, first.body.data.channels.fcm, 'FCM untouched');
  t.ok(flip.body.data.updated_at > first.body.data.updated_at, 'updated_at moves');

  const rekey = await s.req('PUT', path(ws), { token: ws.token, body: { apns: { key_p8: p8(), key_id: 'NEWKEY1234' } } });
  t.equal(rekey.status, 200, rekey.text);
  t.match(rekey.body.data.channels.apns, { key_id: 'NEWKEY1234', team_id: 'DEF123GHIJ', production: true });

  const sa2 = serviceAccount('second-project');
  const fcm = await s.req('PUT', path(ws), { token: ws.token, body: { fcm: { service_account: sa2 } } });
  t.equal(fcm.status, 200, fcm.text);
  t.match(fcm.body.data.channels.fcm, { project_id: 'second-project', client_email: sa2.client_email });
  t.same(fcm.body.data.channels.apns, rekey.body.data.channels.apns, 'APNs untouched');
  const { rows } = await sql.query<{ apns: Buffer }>('SELECT apns FROM push_channels WHERE workspace_id = $1', [ws.id]);
  const before = rows[0]!.apns;
  t.equal((await s.req('PUT', path(ws), { token: ws.token, body: { fcm: { service_account: sa } } })).status, 200);
  const after = (await sql.query<{ apns: Buffer }>('SELECT apns FROM push_channels WHERE workspace_id = $1', [ws.id])).rows[0]!.apns;
  t.ok(before.equals(after), 'a channel omitted keeps its stored bytes (not sealed again)');
});

t.test('removal: null removes a channel; the other stays', async (t) => {
  const ws = await newWorkspace(s, 'Channels removal');
  t.equal((await s.req('PUT', path(ws), { token: ws.token, body: { fcm: { service_account: serviceAccount() }, apns: apns() } })).status, 200);
  const noFcm = await s.req('PUT', path(ws), { token: ws.token, body: { fcm: null } });
  t.equal(noFcm.status, 200, noFcm.text);
  t.same(noFcm.body.data.channels.fcm, { configured: false });
  t.equal(noFcm.body.data.channels.apns.configured, true);
  const none = await s.req('PUT', path(ws), { token: ws.token, body: { apns: null } });
  t.same(none.body.data.channels, NOTHING);
  t.match(none.body.data.updated_at, ISO_MS, 'updated_at stays a time: the row records the removal');
  t.same((await s.req('GET', path(ws), { token: ws.token })).body, none.body);
  // With nothing stored, APNs fields omitted cannot be kept: all four are named.
  const partial = await s.req('PUT', path(ws), { token: ws.token, body: { apns: { production: true } } });
  for (const f of ['key_p8', 'key_id', 'team_id', 'bundle_id']) invalid(t, partial, `apns.${f}`);
  invalid(t, await s.req('PUT', path(ws), { token: ws.token, body: { apns: { key_p8: p8(), key_id: 'ABC123DEFG', team_id: 'DEF123GHIJ' } } }), 'apns.bundle_id');
  t.same((await s.req('GET', path(ws), { token: ws.token })).body, none.body, 'nothing stored by the refused PUTs');
});

t.test('bad input: 400 VALIDATION_ERROR naming the field, nothing stored', async (t) => {
  const ws = await newWorkspace(s, 'Channels validation');
  const sa = serviceAccount();
  const ec = p8();
  const rsa = sa.private_key;
  const rsaPkcs1 = made(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString());
  const p384 = made(generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
  const garbage = '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5IGF0IGFsbA==\n-----END PRIVATE KEY-----\n';
  const withSa = (over: Record<string, unknown>) => ({ fcm: { service_account: { ...sa, ...over } } });
  const cases: [string, unknown, string][] = [
    ['FCM key that is EC', withSa({ private_key: ec }), 'fcm.service_account.private_key'],
    ['FCM key in PKCS#1', withSa({ private_key: rsaPkcs1 }), 'fcm.service_account.private_key'],
    ['FCM key that is no key', withSa({ private_key: garbage }), 'fcm.service_account.private_key'],
    ['FCM key that is not PEM', withSa({ private_key: 'secret' }), 'fcm.service_account.private_key'],
    ['FCM type not service_account', withSa({ type: 'authorized_user' }), 'fcm.service_account.type'],
    ['FCM project_id missing', withSa({ project_id: undefined }), 'fcm.service_account.project_id'],
    ['FCM project_id with a slash', withSa({ project_id: 'a/b' }), 'fcm.service_account.project_id'],
    ['FCM client_email not an email', withSa({ client_email: 'herald' }), 'fcm.service_account.client_email'],
    ['FCM token_uri over http', withSa({ token_uri: 'http://oauth2.googleapis.com/token' }), 'fcm.service_account.token_uri'],
    ['FCM token_uri not a URL', withSa({ token_uri: 'https://' }), 'fcm.service_account.token_uri'],
    // HERALD_FCM_ENDPOINT is Google's here, so the token endpoint must be too (docs/isolation.md).
    ['FCM token_uri on another host', withSa({ token_uri: 'https://oauth2.example.com/token' }), 'fcm.service_account.token_uri'],
    ['FCM token_uri on another port of Google\'s host', withSa({ token_uri: 'https://oauth2.googleapis.com:8443/token' }), 'fcm.service_account.token_uri'],
    ['FCM without service_account', { fcm: {} }, 'fcm.service_account'],
    ['FCM service_account not an object', { fcm: { service_account: JSON.stringify(sa) } }, 'fcm.service_account'],
    ['APNs key that is RSA', { apns: apns({ key_p8: rsa }) }, 'apns.key_p8'],
    ['APNs key on P-384', { apns: apns({ key_p8: p384 }) }, 'apns.key_p8'],
    ['APNs key that is a file path', { apns: apns({ key_p8: '/etc/passwd' }) }, 'apns.key_p8'],
    ['APNs key that is no key', { apns: apns({ key_p8: garbage }) }, 'apns.key_p8'],
    ['APNs key_id of 9 characters', { apns: apns({ key_id: 'ABC123DEF' }) }, 'apns.key_id'],
    ['APNs team_id in lower case', { apns: apns({ team_id: 'def123ghij' }) }, 'apns.team_id'],
    ['APNs bundle_id with a space', { apns: apns({ bundle_id: 'com.example app' }) }, 'apns.bundle_id'],
    ['APNs production not a boolean', { apns: apns({ production: 'yes' }) }, 'apns.production'],
    ['unknown channel', { huawei: { app_id: 'x' }, apns: apns() }, 'huawei'],
    ['unknown APNs field', { apns: apns({ topic: 'com.example.herald' }) }, 'apns.topic'],
    ['unknown FCM field beside service_account', { fcm: { service_account: sa, project_id: 'x' } }, 'fcm.project_id'],
    ['an empty body', {}, 'body'],
    ['a channel that is not an object', { apns: 'yes' }, 'apns'],
  ];
  for (const [what, body, field] of cases) {
    const r = await s.req('PUT', path(ws), { token: ws.token, body });
    t.test(what, async (t) => {
      invalid(t, r, field);
      leaksNothing(t, r, rsa, ec, rsaPkcs1, p384);
    });
  }
  const both = await s.req('PUT', path(ws), { token: ws.token, body: { fcm: { service_account: { ...sa, private_key: ec } }, apns: apns({ key_p8: rsa }) } });
  invalid(t, both, 'fcm.service_account.private_key');
  invalid(t, both, 'apns.key_p8');
  t.same((await s.req('GET', path(ws), { token: ws.token })).body, { success: true, data: { channels: NOTHING, updated_at: null } }, 'nothing stored');
  // A service account's other fields (client_id, auth_uri, …) are accepted.
  t.equal((await s.req('PUT', path(ws), { token: ws.token, body: { fcm: { service_account: sa } } })).status, 200);
});

t.test('roles: owners and admins set credentials, members only read them', async (t) => {
  const ws = await newWorkspace(s, 'Channels roles');
  const admin = uniqueUser('admin');
  const member = uniqueUser('member');
  for (const [user, role] of [[admin, 'admin'], [member, 'member']]) {
    t.equal((await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { user_id: user, role } })).status, 201);
  }
  const memberToken = await s.session(member);
  const refused = await s.req('PUT', path(ws), { token: memberToken, body: { apns: apns() } });
  t.equal(refused.status, 403);
  t.same(refused.body, FORBIDDEN);
  const set = await s.req('PUT', path(ws), { token: await s.session(admin), body: { apns: apns() } });
  t.equal(set.status, 200, set.text);
  const read = await s.req('GET', path(ws), { token: memberToken });
  t.equal(read.status, 200);
  t.same(read.body, set.body, 'a member reads which channels are configured');
});

t.test('refused: an API key, another workspace, a workspace that does not exist, no credential', async (t) => {
  const ws = await newWorkspace(s, 'Channels mine');
  const other = await newWorkspace(s, 'Channels theirs');
  const key = await newKey(s, ws, { permissions: ['*'] });
  for (const method of ['GET', 'PUT'] as const) {
    const body = method === 'PUT' ? { apns: apns() } : undefined;
    const byKey = await s.req(method, path(ws), { token: key.key, body });
    t.equal(byKey.status, 403, `${method} with an API key`);
    t.same(byKey.body, FORBIDDEN);
    const foreign = await s.req(method, path(other), { token: ws.token, body });
    t.equal(foreign.status, 403, `${method} on another workspace`);
    t.same(foreign.body, FORBIDDEN);
    t.equal((await s.req(method, path({ id: '00000000-0000-4000-8000-000000000000' }), { token: ws.token, body })).status, 403, `${method} on no workspace`);
    t.equal((await s.req(method, path(ws), { body })).status, 401, `${method} without a credential`);
  }
  t.same((await s.req('GET', path(other), { token: other.token })).body.data.channels, NOTHING, 'the other workspace got nothing');
});

t.test('HERALD_SECRETS_KEY unset: the key is generated into the data dir, owner-only', async (t) => {
  const file = join(s.dataDir, 'secrets-key');
  t.match(readFileSync(file, 'utf8'), /^[0-9a-f]{64}\n$/);
  t.equal(statSync(file).mode & 0o777, 0o600);
});

t.test('sealed under another key: shown unreadable, refused as a base for a partial update, set again to fix', async (t) => {
  const ws = await newWorkspace(s, 'Channels rekeyed');
  const sa = serviceAccount('rekeyed');
  t.equal((await s.req('PUT', path(ws), { token: ws.token, body: { fcm: { service_account: sa }, apns: apns() } })).status, 200);
  // A second replica on the same database with another key (as when HERALD_SECRETS_KEY was lost or differs).
  const other = recording(await startServer({ DATABASE_URL: storeUrl(s), HERALD_SECRETS_KEY: randomBytes(32).toString('base64') }));
  t.teardown(() => other.stop());
  const get = await other.req('GET', path(ws), { token: ws.token });
  t.equal(get.status, 200, get.text);
  t.same(get.body.data.channels, { fcm: { configured: true, readable: false }, apns: { configured: true, readable: false } });
  const partial = await other.req('PUT', path(ws), { token: ws.token, body: { apns: { production: true } } });
  invalid(t, partial, 'apns.key_p8');
  t.match(partial.body.error.details[0].message, /cannot be opened/);
  const fixed = await other.req('PUT', path(ws), { token: ws.token, body: { apns: apns() } });
  t.equal(fixed.status, 200, fixed.text);
  t.match(fixed.body.data.channels, { apns: { configured: true, readable: true }, fcm: { configured: true, readable: false } });
  // The first replica now reads FCM and no longer APNs.
  t.same((await s.req('GET', path(ws), { token: ws.token })).body.data.channels, {
    fcm: { configured: true, readable: true, project_id: 'rekeyed', client_email: sa.client_email, private_key_id: sa.private_key_id, token_uri: sa.token_uri },
    apns: { configured: true, readable: false },
  });
});

t.test('a malformed HERALD_SECRETS_KEY stops the start with exit 2, naming the variable', async (t) => {
  const err = await startServer({ HERALD_SECRETS_KEY: 'not-a-key' }).then(
    (srv) => (void srv.stop(), null),
    (e: Error) => e,
  );
  t.ok(err, 'the server did not start');
  t.match(err?.message, /server exited with 2/);
  t.match(err?.message, /HERALD_SECRETS_KEY must be 32 bytes as 64 hex characters or base64/);
  t.notOk(err?.message.includes('not-a-key'), 'the value is not printed');
});

t.test('no response of this file carried a line of any private key the tests sent', async (t) => {
  t.ok(answers.length > 50 && keysMade.length > 20, `${answers.length} responses, ${keysMade.length} keys`);
  const lines = new Set(keysMade.flatMap(pemBody));
  const leaks = answers.filter((text) => [...lines].some((line) => text.includes(line)));
  t.same(leaks, []);
});
