// One person, by address: traits, consent (with the change form), devices, their latest
// events (searched by name on the server) and their message history across channels, with the
// address or number an email or SMS went to and the providers' events (paged).
import { useState, type FormEvent } from 'react';
import { api, call, type Schemas } from '../api';
import { Link } from '../router';
import { Actions, Empty, Field, Loaded, Pager, SearchForm, useLoad, usePageBack, useSubmit, when } from '../ui';
import { PERSON_STATUSES } from '../enums';
import { displayName } from './People';
import { MessageTable } from './message-table';
import { Subscriptions } from './Topics';

type Person = Schemas['DashboardPerson'];
const MESSAGES = 20;
const EVENTS = 50;

export function Person({ workspaceId, personId }: { workspaceId: string; personId: string }) {
  const [load, retry] = useLoad(
    () => call(api.GET('/workspaces/{workspaceId}/people/{personId}', { params: { path: { workspaceId, personId } } })),
    [workspaceId, personId],
  );
  /** The person as the consent change answered. */
  const [changed, setChanged] = useState<Person | null>(null);
  const current = (p: Person) => (changed?.id === p.id ? changed : p);
  const person = load.state === 'done' ? current(load.data.data.person) : null;
  return (
    <>
      <p><Link to={`/w/${workspaceId}/people`}>← People</Link></p>
      <h1 tabIndex={-1}>{person ? displayName(person) : 'Person'}</h1>
      <Loaded load={load} retry={retry} what="this person">
        {({ data }) => (
          <div className="columns">
            <Traits person={current(data.person)} />
            <div>
              <Consent workspaceId={workspaceId} person={current(data.person)} onChange={setChanged} />
              <Subscriptions workspaceId={workspaceId} personId={personId} />
              <Devices devices={data.devices} />
            </div>
          </div>
        )}
      </Loaded>
      {person && (
        <>
          <Events workspaceId={workspaceId} personId={personId} />
          <Messages workspaceId={workspaceId} personId={personId} />
        </>
      )}
    </>
  );
}

function Devices({ devices }: { devices: Schemas['Device'][] }) {
  return (
    <section aria-labelledby="devices">
      <h2 id="devices">Devices</h2>
      {devices.length === 0 ? (
        <Empty title="No devices.">
          <p>Your app registers a device's push token with <code>POST /api/v1/people/{'{userId}'}/devices</code>.</p>
        </Empty>
      ) : (
        <ul className="events">
          {devices.map((d) => (
            <li key={d.id}>
              <strong>{d.platform}</strong> {d.device_model ?? d.device_name ?? ''} <code>{mask(d.device_token)}</code>{' '}
              {d.is_active && d.is_valid ? 'active' : d.is_valid ? 'inactive' : 'invalid token'}
              <div className="muted">Last used {when(d.last_used_at)}{d.app_version && <> · app {d.app_version}</>}</div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** As the message history shows tokens: first 4 and last 4 characters. */
const mask = (token: string) => (token.length < 12 ? '***' : `${token.slice(0, 4)}***${token.slice(-4)}`);

function Traits({ person }: { person: Person }) {
  const rows: [string, string][] = [
    ['User ID', person.external_id],
    ['Email', person.email ?? '—'],
    ['Phone', person.phone ?? '—'],
    ['Time zone', person.timezone ?? '—'],
    ['Locale', person.locale ?? '—'],
    ['First seen', when(person.first_seen_at)],
    ['Last seen', when(person.last_seen_at)],
    ...Object.entries(person.attributes).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
  ];
  return (
    <section aria-labelledby="traits">
      <h2 id="traits">Traits</h2>
      <dl className="traits">
        {rows.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

function Consent({ workspaceId, person, onChange }: { workspaceId: string; person: Person; onChange: (p: Person) => void }) {
  const [status, setStatus] = useState<Person['status']>(person.status);
  const [reason, setReason] = useState('');
  const { busy, done, error, fields, submit } = useSubmit();
  const save = (e: FormEvent) => {
    e.preventDefault();
    if (status === person.status) return;
    void submit(async () => {
      const body = { status, ...(status === 'unsubscribed' && reason ? { unsubscribe_reason: reason } : {}) };
      const r = await call(api.PATCH('/workspaces/{workspaceId}/people/{personId}', { params: { path: { workspaceId, personId: person.id } }, body }));
      onChange(r.data.person);
      return 'Saved.';
    });
  };
  return (
    <section aria-labelledby="consent">
      <h2 id="consent">Consent</h2>
      <p>
        Now <span className={`badge ${person.status}`}>{person.status}</span>
        {person.unsubscribed_at && <> since {when(person.unsubscribed_at)}{person.unsubscribe_reason && <> ({person.unsubscribe_reason})</>}</>}.
        Only <em>active</em> people receive messages.
      </p>
      <form onSubmit={save}>
        <div className="field">
          <label htmlFor="consent-status">Status</label>
          <select id="consent-status" value={status} onChange={(e) => setStatus(e.target.value as Person['status'])} aria-describedby={fields.status ? 'consent-status-error' : undefined}>
            {PERSON_STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
          {fields.status && <small id="consent-status-error" className="error">{fields.status}</small>}
        </div>
        {status === 'unsubscribed' && (
          <Field label="Reason (optional)" value={reason} maxLength={255} onChange={(e) => setReason(e.target.value)} error={fields.unsubscribe_reason} />
        )}
        <Actions done={done} error={error}>
          {/* Not `disabled` once saved: focus stays on it. */}
          <button type="submit" aria-disabled={busy || status === person.status || undefined}>{busy ? 'Saving…' : 'Change consent'}</button>
        </Actions>
      </form>
    </section>
  );
}

/**
 * The person's latest events, or the latest of one name (asked of Herald: `name`), paged back by
 * the last event shown.
 */
function Events({ workspaceId, personId }: { workspaceId: string; personId: string }) {
  const [name, setName] = useState('');
  const pages = usePageBack();
  const [load, retry] = useLoad(
    () => call(api.GET('/workspaces/{workspaceId}/people/{personId}/events', { params: { path: { workspaceId, personId }, query: { limit: EVENTS, name: name || undefined, ...pages.query } } })),
    [workspaceId, personId, name, pages.query],
  );
  const search = (text: string) => {
    setName(text);
    pages.reset();
  };
  const older = pages.query !== undefined;
  return (
    <section aria-labelledby="events">
      <h2 id="events">Events</h2>
      <SearchForm label="Search events by name" hint="The whole name, as your app tracks it" value={name} search={search} />
      <Loaded load={load} retry={retry} what="events">
        {(r) =>
          r.events.length === 0 ? (
            name ? (
              <Empty title={`No ${older ? 'older ' : ''}“${name}” events for this person.`}>
                <p><button type="button" className="link" onClick={() => search('')}>Show every event</button></p>
              </Empty>
            ) : (
              <Empty title={older ? 'No older events.' : 'No events yet.'}>
                {older ? (
                  <p><button type="button" className="link" onClick={pages.reset}>Back to the latest events</button></p>
                ) : (
                  <p>Events appear when your app tracks them for this person (<code>POST /api/v1/track</code>).</p>
                )}
              </Empty>
            )
          ) : (
            <>
              <p className="muted">
                {older
                  ? `Page ${pages.page}: ${r.events.length} older${name ? ` “${name}”` : ''} events.`
                  : r.events.length < EVENTS
                    ? `${name ? `Every “${name}” event` : 'Every event'}: ${r.events.length}.`
                    : `The latest ${EVENTS}${name ? ` “${name}” events` : ''}.`}
              </p>
              <ul className="events">
                {r.events.map((ev) => (
                  <li key={ev.id}>
                    <strong>{ev.type}</strong> <time dateTime={ev.created_at}>{when(ev.created_at)}</time>
                    {Object.keys(ev.parameters).length > 0 && <pre>{JSON.stringify(ev.parameters, null, 1)}</pre>}
                  </li>
                ))}
              </ul>
              {pages.pager(r.events.length, EVENTS, r.events.at(-1), 'events')}
            </>
          )
        }
      </Loaded>
    </section>
  );
}

function Messages({ workspaceId, personId }: { workspaceId: string; personId: string }) {
  const [offset, setOffset] = useState(0);
  const [load, retry] = useLoad(
    () => call(api.GET('/workspaces/{workspaceId}/people/{personId}/messages', { params: { path: { workspaceId, personId }, query: { limit: MESSAGES, offset } } })),
    [workspaceId, personId, offset],
  );
  return (
    <section aria-labelledby="messages">
      <h2 id="messages">Messages</h2>
      <Loaded load={load} retry={retry} what="messages">
        {(r) =>
          r.messages.length === 0 ? (
            <Empty title="No messages sent to this person yet.">
              <p>Messages appear here when a campaign or <code>POST /api/v1/workspaces/{'{id}'}/push/send</code> sends to them.</p>
            </Empty>
          ) : (
            <>
              <MessageTable label="Messages, newest first" messages={r.messages} />
              <Pager offset={offset} limit={MESSAGES} total={r.total} go={setOffset} />
            </>
          )
        }
      </Loaded>
    </section>
  );
}
