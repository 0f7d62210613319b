// Topics (docs/audiences.md): what people may opt in to or out of, each with its default for those
// who never chose; nodes naming a topic skip the people not subscribed. A person's subscriptions
// are on their page (Subscriptions, below).
import { useState, type FormEvent } from 'react';
import { api, call } from '../api';
import { Actions, Empty, Field, Loaded, TableBox, describe, useLoad, useSubmit } from '../ui';

type Default = 'opted_in' | 'opted_out';

export function Topics({ workspaceId }: { workspaceId: string }) {
  const [load, retry] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/topics', { params: { path: { workspaceId } } })), [workspaceId]);
  const [rowError, setRowError] = useState('');
  const remove = async (id: string, name: string) => {
    if (!confirm(`Delete the topic ${name}? Nodes naming it then send to everyone.`)) return;
    setRowError('');
    try {
      await call(api.DELETE('/workspaces/{workspaceId}/topics/{topicId}', { params: { path: { workspaceId, topicId: id } } }));
    } catch (e) {
      setRowError(`Could not delete ${name}: ${describe(e)}`);
    }
    retry();
  };
  return (
    <>
      <h1 tabIndex={-1}>Topics</h1>
      <Actions done="" error={rowError} />
      <Loaded load={load} retry={retry} what="topics">
        {(r) =>
          r.topics.length === 0 ? (
            <Empty title="No topics yet.">
              <p>A topic lets people choose what they receive, on the preference page linked by <code>{'{{ preferences_url }}'}</code>.</p>
            </Empty>
          ) : (
            <TableBox label="Topics">
              <table>
                <caption className="sr-only">Topics</caption>
                <thead>
                  <tr><th scope="col">Name</th><th scope="col">Description</th><th scope="col">Default</th><th scope="col">Id</th><th scope="col">Actions</th></tr>
                </thead>
                <tbody>
                  {r.topics.map((t) => (
                    <tr key={t.id}>
                      <td>{t.name}</td>
                      <td>{t.description ?? '—'}</td>
                      <td>{t.default === 'opted_in' ? 'Opted in' : 'Opted out'}</td>
                      <td><code>{t.id}</code></td>
                      <td className="actions"><button type="button" className="danger" onClick={() => void remove(t.id, t.name)}>Delete<span className="sr-only"> {t.name}</span></button></td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableBox>
          )
        }
      </Loaded>
      <NewTopic workspaceId={workspaceId} onCreated={retry} />
    </>
  );
}

function NewTopic({ workspaceId, onCreated }: { workspaceId: string; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [dflt, setDefault] = useState<Default>('opted_in');
  const { busy, done, error, fields, submit } = useSubmit();
  const create = (e: FormEvent) => {
    e.preventDefault();
    void submit(async () => {
      await call(api.POST('/workspaces/{workspaceId}/topics', { params: { path: { workspaceId } }, body: { name: name.trim(), description: description.trim() || null, default: dflt } }));
      setName('');
      setDescription('');
      onCreated();
      return `Topic ${name.trim()} created.`;
    });
  };
  return (
    <section aria-labelledby="new-topic">
      <h2 id="new-topic">New topic</h2>
      <form onSubmit={create}>
        <Field label="Topic name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} error={fields.name} />
        <Field label="Description" value={description} onChange={(e) => setDescription(e.target.value)} maxLength={2000} error={fields.description} />
        <fieldset>
          <legend>For people who never chose</legend>
          <label><input type="radio" name="default" checked={dflt === 'opted_in'} onChange={() => setDefault('opted_in')} /> Opted in (sent to)</label>
          <label><input type="radio" name="default" checked={dflt === 'opted_out'} onChange={() => setDefault('opted_out')} /> Opted out (not sent to)</label>
        </fieldset>
        <Actions done={done} error={error}>
          <button type="submit" aria-disabled={busy || undefined}>{busy ? 'Creating…' : 'Create topic'}</button>
        </Actions>
      </form>
    </section>
  );
}

/** A person's subscriptions on their page: a checkbox a topic, saved when changed. */
export function Subscriptions({ workspaceId, personId }: { workspaceId: string; personId: string }) {
  const [topics] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/topics', { params: { path: { workspaceId } } })), [workspaceId]);
  const [load, retry] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/people/{personId}/subscriptions', { params: { path: { workspaceId, personId } } })), [workspaceId, personId]);
  const { done, error, submit } = useSubmit();
  // A box shows its new state at once (what is being saved); a refusal puts it back.
  const [saving, setSaving] = useState<Record<string, boolean>>({});
  const change = (id: string, name: string, on: boolean) => {
    setSaving((s) => ({ ...s, [id]: on }));
    void submit(async () => {
      try {
        await call(api.PUT('/workspaces/{workspaceId}/people/{personId}/subscriptions', { params: { path: { workspaceId, personId } }, body: { subscriptions: { [id]: on } } }));
      } catch (e) {
        setSaving((s) => Object.fromEntries(Object.entries(s).filter(([k]) => k !== id)));
        throw e;
      }
      retry();
      return `${on ? 'Subscribed to' : 'Unsubscribed from'} ${name}.`;
    });
  };
  return (
    <section aria-labelledby="subscriptions">
      <h2 id="subscriptions">Subscriptions</h2>
      <Loaded load={load} retry={retry} what="the subscriptions">
        {(r) =>
          topics.state !== 'done' || topics.data.topics.length === 0 ? (
            <p className="muted">The workspace has no topics.</p>
          ) : (
            <fieldset>
              <legend className="sr-only">Topics</legend>
              {topics.data.topics.map((t) => (
                <label key={t.id}>
                  <input type="checkbox" checked={saving[t.id] ?? r.subscriptions[t.id] ?? false} onChange={(e) => change(t.id, t.name, e.target.checked)} /> {t.name}
                </label>
              ))}
            </fieldset>
          )
        }
      </Loaded>
      <Actions done={done} error={error} />
    </section>
  );
}
