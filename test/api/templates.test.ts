// Message templates through the real HTTP server (docs/channels.md; README, Permissions): create, list,
// get, partial update, delete; Liquid that does not parse is a 400 naming the field; a template
// a live campaign uses cannot be deleted; campaigns created from a template; isolation.
import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { newKey, newWorkspace } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { UUID, ISO_MS, FORBIDDEN, sessionError, type Ws } from '../helpers/assert.js';

const s = await sharedServer();

const FIELDS = ['action_url', 'body', 'channel', 'created_at', 'custom_data', 'html', 'id', 'image_url', 'name', 'preheader', 'subject', 'text', 'title', 'updated_at', 'workspace_id'];
const WELCOME = { name: 'Welcome', channel: 'push', title: 'Hi {{ person.first_name | default: "there" }}', body: 'Welcome aboard', custom_data: { screen: 'home' } };

const path = (ws: Ws, id?: string) => `/workspaces/${ws.id}/templates${id === undefined ? '' : `/${id}`}`;
const create = (ws: Ws, body: unknown) => s.req('POST', path(ws), { token: ws.token, body });
const get = (ws: Ws, id: string) => s.req('GET', path(ws, id), { token: ws.token });
const put = (ws: Ws, id: string, body: unknown) => s.req('PUT', path(ws, id), { token: ws.token, body });
const del = (ws: Ws, id: string) => s.req('DELETE', path(ws, id), { token: ws.token });
const campaigns = (ws: Ws) => ({ token: ws.token, headers: { 'x-workspace-id': ws.id } });

async function created(t: Test, ws: Ws, body: unknown = WELCOME): Promise<{ id: string; [field: string]: unknown }> {
  const r = await create(ws, body);
  t.equal(r.status, 201, r.text);
  return r.body.data.template;
}

t.test('create, get and list', async (t) => {
  const ws = await newWorkspace(s);
  const r = await create(ws, WELCOME);
  t.equal(r.status, 201, r.text);
  t.equal(r.body.success, true);
  t.same(Object.keys(r.body.data), ['template']);
  const tpl = r.body.data.template;
  t.same(Object.keys(tpl).sort(), FIELDS);
  t.match(tpl.id, UUID);
  t.equal(tpl.workspace_id, ws.id);
  t.match(tpl, { name: 'Welcome', channel: 'push', title: WELCOME.title, body: 'Welcome aboard', image_url: null, action_url: null, custom_data: { screen: 'home' } });
  t.match(tpl.created_at, ISO_MS);

  const bare = await created(t, ws, { name: 'Bare', channel: 'push' });
  t.match(bare, { title: null, body: null, custom_data: null });

  t.same((await get(ws, tpl.id)).body, { success: true, data: { template: tpl } });
  t.equal((await get(ws, tpl.id.toUpperCase())).body.data?.template?.id, tpl.id);
  const l = await s.req('GET', path(ws), { token: ws.token });
  t.equal(l.status, 200, l.text);
  t.same(Object.keys(l.body).sort(), ['success', 'templates', 'total']);
  t.equal(l.body.total, 2);
  t.same(l.body.templates.map((x: { id: string }) => x.id), [bare.id, tpl.id], 'newest first');
  sessionError(t, await get(ws, randomUUID()), 404, 'NOT_FOUND');
  sessionError(t, await get(ws, 'not-a-uuid'), 404, 'NOT_FOUND');
});

t.test('create refuses missing fields, another channel, and templates that do not parse (naming the field)', async (t) => {
  const ws = await newWorkspace(s);
  sessionError(t, await create(ws, { channel: 'push', title: 'x' }), 400, 'VALIDATION_ERROR', 'name');
  sessionError(t, await create(ws, { name: 'x' }), 400, 'VALIDATION_ERROR', 'channel');
  sessionError(t, await create(ws, { name: 'x', channel: 'whatsapp' }), 400, 'VALIDATION_ERROR', 'channel');
  sessionError(t, await create(ws, { name: 'x', channel: 'push', title: 'Hi {{ name' }), 400, 'VALIDATION_ERROR', 'title');
  sessionError(t, await create(ws, { name: 'x', channel: 'push', body: '{% if x %}no end' }), 400, 'VALIDATION_ERROR', 'body');
  sessionError(t, await create(ws, { name: 'x', channel: 'push', action_url: 'https://x/{{ id | nosuchfilter }}' }), 400, 'VALIDATION_ERROR', 'action_url');
  sessionError(t, await create(ws, { name: 'x', channel: 'push', custom_data: { deep: { link: '{{ id' } } }), 400, 'VALIDATION_ERROR', 'custom_data.deep.link');
  sessionError(t, await create(ws, { name: 'x', channel: 'push', title: 'Hi {% include "x" %}' }), 400, 'VALIDATION_ERROR', 'title');
  t.equal((await s.req('GET', path(ws), { token: ws.token })).body.total, 0, 'nothing stored');
});

t.test("an email template's Liquid error names the field as the dashboard shows it (subject, html), on create and update", async (t) => {
  const ws = await newWorkspace(s);
  const email = { name: 'Mail', channel: 'email', subject: 'Hello', html: '<p>Hi</p>', text: 'Hi', preheader: 'Psst' };
  for (const field of ['subject', 'html', 'text', 'preheader']) {
    const r = await create(ws, { ...email, [field]: 'Hi {{ name' });
    sessionError(t, r, 400, 'VALIDATION_ERROR', field);
    t.notMatch(r.text, /custom_data/, `${field}: no custom_data in the answer`);
  }
  const tpl = await created(t, ws, email);
  const bad = await put(ws, tpl.id, { html: '<p>{{ x | nope }}</p>' });
  sessionError(t, bad, 400, 'VALIDATION_ERROR', 'html');
  t.notMatch(bad.text, /custom_data/, 'update: no custom_data in the answer');
});

t.test('update is partial: fields sent replace, null clears, omitted stay; a bad template changes nothing', async (t) => {
  const ws = await newWorkspace(s);
  const tpl = await created(t, ws);
  const r = await put(ws, tpl.id, { name: 'Renamed', image_url: 'https://cdn/x.png' });
  t.equal(r.status, 200, r.text);
  const u = r.body.data.template;
  t.match(u, { name: 'Renamed', title: WELCOME.title, body: WELCOME.body, image_url: 'https://cdn/x.png', custom_data: { screen: 'home' } });
  const cleared = (await put(ws, tpl.id, { custom_data: null, title: null })).body.data.template;
  t.match(cleared, { title: null, custom_data: null, body: WELCOME.body });
  const bad = await put(ws, tpl.id, { body: '{{ unclosed' });
  sessionError(t, bad, 400, 'VALIDATION_ERROR', 'body');
  t.same((await get(ws, tpl.id)).body.data.template, cleared, 'unchanged');
  sessionError(t, await put(ws, tpl.id, { channel: 'whatsapp' }), 400, 'VALIDATION_ERROR', 'channel');
  sessionError(t, await put(ws, randomUUID(), { name: 'x' }), 404, 'NOT_FOUND');
});

t.test('a campaign from a template: one push node using it; activation reads the template', async (t) => {
  const ws = await newWorkspace(s);
  const tpl = await created(t, ws);
  const r = await s.req('POST', '/campaigns', { ...campaigns(ws), body: { name: 'From template', trigger_type: 'webhook', trigger_config: {}, template_id: tpl.id.toUpperCase() } });
  t.equal(r.status, 201, r.text);
  const c = r.body.data.campaign;
  t.equal(c.template_id, tpl.id);
  t.same(c.workflow_definition, { nodes: [{ id: 'push', type: 'push', template_id: tpl.id }] });
  const active = await s.req('PUT', `/campaigns/${c.id}`, { ...campaigns(ws), body: { status: 'active' } });
  t.equal(active.body.data?.campaign?.status, 'active', active.text);

  // With a workflow, push nodes naming no template get it.
  const w = await s.req('POST', '/campaigns', {
    ...campaigns(ws),
    body: { name: 'Both', trigger_type: 'webhook', trigger_config: {}, template_id: tpl.id, workflow_definition: { nodes: [{ id: 'a', type: 'push' }, { id: 'd', type: 'delay', minutes: 1 }] } },
  });
  t.same(w.body.data.campaign.workflow_definition.nodes, [{ id: 'a', type: 'push', template_id: tpl.id }, { id: 'd', type: 'delay', minutes: 1 }]);

  // A template without title or body gives a node nothing to send.
  const empty = await created(t, ws, { name: 'Empty', channel: 'push', image_url: 'https://x' });
  const e = await s.req('POST', '/campaigns', { ...campaigns(ws), body: { name: 'Empty', trigger_type: 'webhook', trigger_config: {}, template_id: empty.id } });
  const refused = await s.req('PUT', `/campaigns/${e.body.data.campaign.id}`, { ...campaigns(ws), body: { status: 'active' } });
  sessionError(t, refused, 400, 'ACTIVATION_FAILED', 'workflow_definition.nodes.0');

  // Another workspace's template is no template here.
  const other = await newWorkspace(s);
  const theirs = await created(t, other);
  const x = await s.req('POST', '/campaigns', { ...campaigns(ws), body: { name: 'x', trigger_type: 'webhook', trigger_config: {}, template_id: theirs.id } });
  sessionError(t, x, 400, 'VALIDATION_ERROR', 'template_id');
});

t.test('delete: 200, then 404; TEMPLATE_IN_USE while a live campaign uses it', async (t) => {
  const ws = await newWorkspace(s);
  const unused = await created(t, ws, { name: 'Unused', channel: 'push', body: 'x' });
  const d = await del(ws, unused.id);
  t.equal(d.status, 200, d.text);
  t.same(Object.keys(d.body).sort(), ['message', 'success']);
  sessionError(t, await get(ws, unused.id), 404, 'NOT_FOUND');
  sessionError(t, await del(ws, unused.id), 404, 'NOT_FOUND');

  const tpl = await created(t, ws);
  // Used by a node of an active campaign (named in the workflow, not at creation).
  const c = await s.req('POST', '/campaigns', { ...campaigns(ws), body: { name: 'Uses it', trigger_type: 'webhook', trigger_config: {}, workflow_definition: { nodes: [{ id: 'n', type: 'push', template_id: tpl.id }] } } });
  const id = c.body.data.campaign.id;
  const draftUse = await created(t, ws, { name: 'Draft use', channel: 'push', body: 'x' });
  await s.req('POST', '/campaigns', { ...campaigns(ws), body: { name: 'Draft', trigger_type: 'webhook', trigger_config: {}, template_id: draftUse.id } });
  t.equal((await s.req('PUT', `/campaigns/${id}`, { ...campaigns(ws), body: { status: 'active' } })).status, 200);
  const inUse = await del(ws, tpl.id);
  sessionError(t, inUse, 409, 'TEMPLATE_IN_USE');
  t.match(inUse.body.error.message, /Uses it/);
  t.equal((await get(ws, tpl.id)).status, 200, 'still there');
  // Scheduled counts as live too.
  const sched = await s.req('POST', '/campaigns', { ...campaigns(ws), body: { name: 'Later', trigger_type: 'schedule', trigger_config: { send_at: new Date(Date.now() + 86_400_000).toISOString() }, template_id: tpl.id } });
  t.equal((await s.req('PUT', `/campaigns/${sched.body.data.campaign.id}`, { ...campaigns(ws), body: { status: 'active' } })).body.data?.campaign?.status, 'scheduled');
  t.equal((await s.req('PUT', `/campaigns/${id}`, { ...campaigns(ws), body: { status: 'paused' } })).status, 200);
  sessionError(t, await del(ws, tpl.id), 409, 'TEMPLATE_IN_USE');
  t.equal((await s.req('PUT', `/campaigns/${sched.body.data.campaign.id}`, { ...campaigns(ws), body: { status: 'paused' } })).status, 200);
  t.equal((await del(ws, tpl.id)).status, 200, 'no live campaign uses it now');
  // A draft's template may go; the campaign cannot be activated until its node has content again.
  t.equal((await del(ws, draftUse.id)).status, 200);
  const again = await s.req('PUT', `/campaigns/${id}`, { ...campaigns(ws), body: { status: 'active' } });
  sessionError(t, again, 400, 'ACTIVATION_FAILED', 'workflow_definition.nodes.0.template_id');
});

t.test("isolation: another workspace's template 404; a non-member 403; an API key 403", async (t) => {
  const a = await newWorkspace(s, 'A');
  const b = await newWorkspace(s, 'B');
  const tpl = await created(t, a);
  sessionError(t, await get(b, tpl.id), 404, 'NOT_FOUND');
  sessionError(t, await put(b, tpl.id, { name: 'x' }), 404, 'NOT_FOUND');
  sessionError(t, await del(b, tpl.id), 404, 'NOT_FOUND');
  t.equal((await s.req('GET', path(b), { token: b.token })).body.total, 0);

  const stranger = { id: a.id, owner: b.owner, token: b.token };
  const key = (await newKey(s, a, { permissions: ['*'] })).key;
  const keyed = { id: a.id, owner: a.owner, token: key };
  for (const who of [stranger, keyed]) {
    for (const r of [await s.req('GET', path(who), { token: who.token }), await create(who, WELCOME), await get(who, tpl.id), await put(who, tpl.id, { name: 'x' }), await del(who, tpl.id)]) {
      t.equal(r.status, 403, r.text);
      t.same(r.body, FORBIDDEN);
    }
  }
  t.equal((await get(a, tpl.id)).body.data.template.name, 'Welcome');
});
