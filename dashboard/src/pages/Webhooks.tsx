// Outbound webhooks (docs/webhooks.md): endpoints created with an event-type picker, the signing
// secret shown once with a copy button (and again after a rotation), enable and disable (with
// the reason Herald disabled one), a test event, the attempts with status, error and next retry,
// a resend of a failed one, and how a receiver checks the signature in Node and Python.
import { useState, type FormEvent } from 'react';
import { api, call } from '../api';
import { WEBHOOK_EVENT_TYPES } from '../../../src/domain/webhook-events.js';
import { Actions, Empty, Field, Loaded, ShownOnce, TableBox, describe, fieldError, useLoad, useSubmit, when } from '../ui';

type EventType = (typeof WEBHOOK_EVENT_TYPES)[number] | '*';

function useEndpoints(workspaceId: string) {
  return useLoad(() => call(api.GET('/workspaces/{workspaceId}/webhooks', { params: { path: { workspaceId } } })), [workspaceId]);
}
type Endpoint = Extract<ReturnType<typeof useEndpoints>[0], { state: 'done' }>['data']['data']['endpoints'][number];

export function Webhooks({ workspaceId }: { workspaceId: string }) {
  const [load, retry] = useEndpoints(workspaceId);
  /** A secret just made (created or rotated): shown once. */
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  const [attemptsOf, setAttemptsOf] = useState<string | null>(null);
  const [status, setStatus] = useState({ done: '', error: '' });

  const act = async (what: string, run: () => Promise<string>) => {
    setStatus({ done: '', error: '' });
    try {
      setStatus({ done: await run(), error: '' });
      retry();
    } catch (e) {
      setStatus({ done: '', error: `Could not ${what}: ${describe(e)}` });
    }
  };
  const path = (e: Endpoint) => ({ params: { path: { workspaceId, endpointId: e.id } } });
  const toggle = (e: Endpoint) =>
    act(e.enabled ? 'disable it' : 'enable it', async () => {
      await call(api.PUT('/workspaces/{workspaceId}/webhooks/{endpointId}', { ...path(e), body: { enabled: !e.enabled } }));
      return `${e.enabled ? 'Disabled' : 'Enabled'} ${e.url}.`;
    });
  const test = (e: Endpoint) =>
    act('send a test event', async () => {
      const r = await call(api.POST('/workspaces/{workspaceId}/webhooks/{endpointId}/test', path(e)));
      setAttemptsOf(e.id);
      return `A webhook.test event (${r.data.message_id}) is on its way to ${e.url}.`;
    });
  const rotate = (e: Endpoint) => {
    if (!confirm(`Replace the signing secret of ${e.url}? The current one keeps signing beside the new one for 24 hours.`)) return;
    void act('rotate the secret', async () => {
      const r = await call(api.POST('/workspaces/{workspaceId}/webhooks/{endpointId}/rotate-secret', path(e)));
      setSecret({ url: e.url, secret: r.data.secret });
      return '';
    });
  };
  const remove = (e: Endpoint) => {
    if (!confirm(`Delete the endpoint ${e.url}? Its pending deliveries are dropped.`)) return;
    void act('delete it', async () => {
      await call(api.DELETE('/workspaces/{workspaceId}/webhooks/{endpointId}', path(e)));
      if (attemptsOf === e.id) setAttemptsOf(null);
      return `Deleted ${e.url}.`;
    });
  };

  return (
    <>
      <h1 tabIndex={-1}>Webhooks</h1>
      <p>Herald POSTs the events you pick to your endpoints, signed per the Standard Webhooks specification, retried for about 27 hours when they fail.</p>
      {secret && <ShownOnce id="new-webhook-secret" heading={`The signing secret of ${secret.url}`} note="Copy it now: Herald will never show it again. Your receiver verifies each delivery with it." what="signing secret" value={secret.secret} onDone={() => setSecret(null)} />}
      <Actions done={status.done} error={status.error} />
      <Loaded load={load} retry={retry} what="webhook endpoints">
        {(r) =>
          r.data.endpoints.length === 0 ? (
            <Empty title="No webhook endpoints yet.">
              <p>Add one below: a URL of yours and the events it should receive.</p>
            </Empty>
          ) : (
            <TableBox label="Webhook endpoints">
              <table>
                <caption className="sr-only">Webhook endpoints</caption>
                <thead>
                  <tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">State</th><th scope="col">Actions</th></tr>
                </thead>
                <tbody>
                  {r.data.endpoints.map((e) => (
                    <tr key={e.id}>
                      <td>
                        <code>{e.url}</code>
                        {e.description && <div>{e.description}</div>}
                        <div className="muted">created {when(e.created_at)}</div>
                      </td>
                      <td>{e.event_types.includes('*') ? 'all events' : e.event_types.join(', ')}</td>
                      <td>
                        {e.enabled ? 'enabled' : 'disabled'}
                        {e.disabled_reason && <div className="muted">{e.disabled_reason}</div>}
                      </td>
                      <td className="actions">
                        <button type="button" onClick={() => void test(e)}>Send test<span className="sr-only"> to {e.url}</span></button>
                        <button type="button" aria-expanded={attemptsOf === e.id} onClick={() => setAttemptsOf(attemptsOf === e.id ? null : e.id)}>Attempts<span className="sr-only"> of {e.url}</span></button>
                        <button type="button" onClick={() => void toggle(e)}>{e.enabled ? 'Disable' : 'Enable'}<span className="sr-only"> {e.url}</span></button>
                        <button type="button" onClick={() => rotate(e)}>Rotate secret<span className="sr-only"> of {e.url}</span></button>
                        <button type="button" className="danger" onClick={() => remove(e)}>Delete<span className="sr-only"> {e.url}</span></button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableBox>
          )
        }
      </Loaded>
      {attemptsOf && load.state === 'done' && <Attempts workspaceId={workspaceId} endpointId={attemptsOf} url={load.data.data.endpoints.find((e) => e.id === attemptsOf)?.url ?? ''} />}
      <CreateEndpoint workspaceId={workspaceId} onCreated={(url, s) => { setSecret({ url, secret: s }); retry(); }} />
      <Verifying />
    </>
  );
}

function Attempts({ workspaceId, endpointId, url }: { workspaceId: string; endpointId: string; url: string }) {
  const [load, retry] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/webhooks/{endpointId}/attempts', { params: { path: { workspaceId, endpointId }, query: { limit: 50 } } })), [workspaceId, endpointId]);
  const [status, setStatus] = useState({ done: '', error: '' });
  const resend = async (attemptId: string) => {
    setStatus({ done: '', error: '' });
    try {
      const r = await call(api.POST('/workspaces/{workspaceId}/webhooks/{endpointId}/attempts/{attemptId}/resend', { params: { path: { workspaceId, endpointId, attemptId } } }));
      setStatus({ done: `${r.data.message_id} is queued again.`, error: '' });
      retry();
    } catch (e) {
      setStatus({ done: '', error: `Could not resend: ${describe(e)}` });
    }
  };
  return (
    <section aria-labelledby="attempts">
      <h2 id="attempts">Attempts to {url}</h2>
      <div className="inline">
        <button type="button" onClick={retry}>Refresh attempts</button>
      </div>
      <Actions done={status.done} error={status.error} />
      <Loaded load={load} retry={retry} what="attempts">
        {(r) =>
          r.data.attempts.length === 0 ? (
            <p>No attempts yet. Events are sent within a second of happening.</p>
          ) : (
            <TableBox label="Attempts">
              <table>
                <caption className="sr-only">Attempts, newest first</caption>
                <thead>
                  <tr><th scope="col">Event</th><th scope="col">Attempt</th><th scope="col">Answer</th><th scope="col">At</th><th scope="col">Next retry</th><th scope="col">Actions</th></tr>
                </thead>
                <tbody>
                  {r.data.attempts.map((a) => {
                    const ok = a.status_code !== null && a.status_code >= 200 && a.status_code < 300;
                    return (
                      <tr key={a.id}>
                        <td>{a.event_type}<div className="muted"><code>{a.message_id}</code></div></td>
                        <td>{a.attempt}</td>
                        <td>{ok ? `${a.status_code} delivered` : (a.error ?? `HTTP ${a.status_code}`)}</td>
                        <td>{when(a.at)}</td>
                        <td>{ok ? '—' : a.next_attempt_at ? when(a.next_attempt_at) : 'none: failed'}</td>
                        <td className="actions">
                          {!ok && !a.next_attempt_at && <button type="button" onClick={() => void resend(a.id)}>Resend<span className="sr-only"> {a.event_type} attempt {a.attempt}</span></button>}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </TableBox>
          )
        }
      </Loaded>
    </section>
  );
}

function CreateEndpoint({ workspaceId, onCreated }: { workspaceId: string; onCreated: (url: string, secret: string) => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [types, setTypes] = useState<EventType[]>([]);
  const { busy, done, error, fields, submit } = useSubmit();
  const all = types.includes('*');
  const flip = (t: EventType) => setTypes((ts) => (ts.includes(t) ? ts.filter((x) => x !== t) : [...ts, t]));
  const create = (e: FormEvent) => {
    e.preventDefault();
    void submit(async () => {
      const body = { url, event_types: all ? (['*'] as EventType[]) : types, ...(description ? { description } : {}) };
      const r = await call(api.POST('/workspaces/{workspaceId}/webhooks', { params: { path: { workspaceId } }, body }));
      onCreated(r.data.endpoint.url, r.data.secret);
      setUrl('');
      setDescription('');
      setTypes([]);
    });
  };
  return (
    <section aria-labelledby="create-endpoint">
      <h2 id="create-endpoint">Add an endpoint</h2>
      <form onSubmit={create}>
        <Field label="URL" type="url" value={url} onChange={(e) => setUrl(e.target.value)} required maxLength={2048} placeholder="https://example.com/herald" error={fields.url} />
        <Field label="Description (optional)" value={description} onChange={(e) => setDescription(e.target.value)} maxLength={1000} error={fields.description} />
        <fieldset aria-describedby={fieldError(fields, 'event_types') ? 'event-types-error' : undefined}>
          <legend>Events</legend>
          <label><input type="checkbox" checked={all} onChange={() => flip('*')} /> All events</label>
          {WEBHOOK_EVENT_TYPES.map((t) => (
            <label key={t}><input type="checkbox" disabled={all} checked={all || types.includes(t)} onChange={() => flip(t)} /> {t}</label>
          ))}
          {fieldError(fields, 'event_types') && <small id="event-types-error" className="error">{fieldError(fields, 'event_types')}</small>}
        </fieldset>
        <Actions done={done} error={error}>
          <button type="submit" aria-disabled={busy || undefined}>{busy ? 'Adding…' : 'Add endpoint'}</button>
        </Actions>
      </form>
    </section>
  );
}

const NODE = `import { Webhook } from 'standardwebhooks'; // npm i standardwebhooks
const wh = new Webhook(process.env.HERALD_WEBHOOK_SECRET); // "whsec_…"
// rawBody: the request body as received, before any JSON parsing
const event = wh.verify(rawBody, {
  'webhook-id': req.headers['webhook-id'],
  'webhook-timestamp': req.headers['webhook-timestamp'],
  'webhook-signature': req.headers['webhook-signature'],
}); // throws unless signed with the secret within 5 minutes`;

const PYTHON = `from standardwebhooks.webhooks import Webhook  # pip install standardwebhooks
wh = Webhook(os.environ["HERALD_WEBHOOK_SECRET"])  # "whsec_…"
event = wh.verify(request.get_data(), request.headers)  # raises unless signed`;

function Verifying() {
  return (
    <section aria-labelledby="verifying">
      <h2 id="verifying">Checking the signature</h2>
      <p>Each delivery carries <code>webhook-id</code> (the same on every retry: skip ids you have seen), <code>webhook-timestamp</code> and <code>webhook-signature</code>. Answer 2xx within 15 seconds; anything else is retried; 410 disables the endpoint.</p>
      <h3>Node</h3>
      <pre tabIndex={0} aria-label="Node example">{NODE}</pre>
      <h3>Python</h3>
      <pre tabIndex={0} aria-label="Python example">{PYTHON}</pre>
    </section>
  );
}
