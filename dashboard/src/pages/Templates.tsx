// Message templates: the list (by channel) and the editor of one, new or existing, with the
// fields of its channel (docs/channels.md); Liquid errors at the field (and line) Herald names.
import { useState, type FormEvent } from 'react';
import { api, call, type Schemas } from '../api';
import { Link, navigate, useRoute, withQuery } from '../router';
import { Actions, describe, Empty, Field, Loaded, TableBox, TextField, useLoad, useSubmit, when } from '../ui';
import { CHANNEL_LABEL, CHANNELS, type Channel } from '../enums';
import { PersonPicker, RenderedMessage, TEMPLATE_FIELDS, usePreview } from './authoring-parts';

type Template = Schemas['MessageTemplate'];

export function Templates({ workspaceId, templateId }: { workspaceId: string; templateId?: string }) {
  if (templateId === 'new') return <TemplateEditor workspaceId={workspaceId} template={null} />;
  if (templateId) return <ExistingTemplate workspaceId={workspaceId} templateId={templateId} />;
  return <TemplateList workspaceId={workspaceId} />;
}

function TemplateList({ workspaceId }: { workspaceId: string }) {
  const { query } = useRoute();
  const channel = CHANNELS.find((c) => c === query.get('channel'));
  const [load, retry] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/templates', { params: { path: { workspaceId } } })), [workspaceId]);
  const [done, setDone] = useState('');
  const [failed, setFailed] = useState('');
  const remove = async (t: Template) => {
    if (!confirm(`Delete the template ${t.name}?`)) return;
    setDone('');
    setFailed('');
    try {
      await call(api.DELETE('/workspaces/{workspaceId}/templates/{templateId}', { params: { path: { workspaceId, templateId: t.id } } }));
      setDone(`${t.name} deleted.`);
      retry();
    } catch (e) {
      setFailed(`Could not delete ${t.name}: ${describe(e)}`);
    }
  };
  return (
    <>
      <p><Link to={`/w/${workspaceId}/campaigns`}>← Campaigns</Link></p>
      <h1 tabIndex={-1}>Templates</h1>
      <p>
        A template holds a message's content, for push, email or SMS, written in Liquid. Workflow steps of its channel can use it.{' '}
        <Link to={`/w/${workspaceId}/templates/new`}>New template</Link>
      </p>
      <nav className="tabs" aria-label="Channels">
        <Link to={`/w/${workspaceId}/templates`} aria-current={channel ? undefined : 'page'}>All</Link>
        {CHANNELS.map((c) => (
          <Link key={c} to={`/w/${workspaceId}/templates${withQuery(new URLSearchParams(), { channel: c })}`} aria-current={channel === c ? 'page' : undefined}>{CHANNEL_LABEL[c]}</Link>
        ))}
      </nav>
      <Actions done={done} error={failed} />
      <Loaded load={load} retry={retry} what="templates">
        {(r) => {
          const shown = channel ? r.templates.filter((t) => t.channel === channel) : r.templates;
          return shown.length === 0 ? (
            <Empty title={channel ? `No ${CHANNEL_LABEL[channel]} templates yet.` : 'No templates yet.'}>
              <p>
                <Link to={`/w/${workspaceId}/templates/new${channel ? `?channel=${channel}` : ''}`}>Create a template</Link>, then pick it in a campaign's workflow step.
              </p>
            </Empty>
          ) : (
            <TableBox label="Templates">
              <table>
                <caption className="sr-only">Templates</caption>
                <thead>
                  <tr><th scope="col">Name</th><th scope="col">Channel</th><th scope="col">Content</th><th scope="col">Updated</th><th scope="col">Actions</th></tr>
                </thead>
                <tbody>
                  {shown.map((t) => (
                    <tr key={t.id}>
                      <td><Link to={`/w/${workspaceId}/templates/${t.id}`}>{t.name}</Link></td>
                      <td>{CHANNEL_LABEL[t.channel]}</td>
                      <td>{t.subject ?? t.title ?? t.body ?? '—'}</td>
                      <td>{when(t.updated_at)}</td>
                      <td className="actions"><button type="button" className="danger" onClick={() => void remove(t)} aria-label={`Delete ${t.name}`}>Delete</button></td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableBox>
          );
        }}
      </Loaded>
    </>
  );
}

function ExistingTemplate({ workspaceId, templateId }: { workspaceId: string; templateId: string }) {
  const [load, retry] = useLoad(
    () => call(api.GET('/workspaces/{workspaceId}/templates/{templateId}', { params: { path: { workspaceId, templateId } } })),
    [workspaceId, templateId],
  );
  return (
    <Loaded load={load} retry={retry} what="this template">
      {({ data }) => <TemplateEditor key={data.template.id} workspaceId={workspaceId} template={data.template} />}
    </Loaded>
  );
}

type Content = Partial<Record<(typeof TEMPLATE_FIELDS)['push'][number]['key'] | (typeof TEMPLATE_FIELDS)['email'][number]['key'], string>>;

function TemplateEditor({ workspaceId, template }: { workspaceId: string; template: Template | null }) {
  const { query } = useRoute();
  const initialChannel = template?.channel ?? CHANNELS.find((c) => c === query.get('channel')) ?? 'push';
  const [name, setName] = useState(template?.name ?? '');
  const [channel, setChannel] = useState<Channel>(initialChannel);
  const [content, setContent] = useState<Content>(() =>
    Object.fromEntries(TEMPLATE_FIELDS[initialChannel].map((f) => [f.key, (template?.[f.key] as string | null | undefined) ?? ''])),
  );
  const { busy, done, error, fields, submit } = useSubmit();
  const own = TEMPLATE_FIELDS[channel];
  const preview = usePreview(workspaceId, channel, content);
  const save = (e: FormEvent) => {
    e.preventDefault();
    void submit(async () => {
      if (template) {
        const body = { name: name.trim(), ...Object.fromEntries(own.map((f) => [f.key, content[f.key] ? content[f.key] : null])) };
        await call(api.PUT('/workspaces/{workspaceId}/templates/{templateId}', { params: { path: { workspaceId, templateId: template.id } }, body }));
        return 'Saved.';
      } else {
        const body = { name: name.trim(), channel, ...Object.fromEntries(own.flatMap((f) => (content[f.key] ? [[f.key, content[f.key]]] : []))) };
        const r = await call(api.POST('/workspaces/{workspaceId}/templates', { params: { path: { workspaceId } }, body }));
        navigate(`/w/${workspaceId}/templates/${r.data.template.id}`, { replace: true });
      }
    });
  };
  return (
    <>
      <p><Link to={`/w/${workspaceId}/templates`}>← Templates</Link></p>
      <h1 tabIndex={-1}>{template ? template.name : 'New template'}</h1>
      <div className="columns">
        <form onSubmit={save}>
          <Field label="Name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} error={fields.name} />
          {template ? (
            <p>Channel: <strong>{CHANNEL_LABEL[channel]}</strong></p>
          ) : (
            <div className="field">
              <label htmlFor="template-channel">Channel</label>
              <select id="template-channel" value={channel} onChange={(e) => setChannel(e.target.value as Channel)}>
                {CHANNELS.map((c) => <option key={c} value={c}>{CHANNEL_LABEL[c]}</option>)}
              </select>
            </div>
          )}
          {own.map((f) => {
            const props = { label: f.label, value: content[f.key] ?? '', error: fields[f.key] ?? preview.fields[f.key], hint: f.hint };
            const onChange = (v: string) => setContent((c) => ({ ...c, [f.key]: v }));
            return f.area ? (
              <TextField key={f.key} {...props} rows={f.key === 'html' ? 10 : 4} onChange={(e) => onChange(e.target.value)} />
            ) : (
              <Field key={f.key} {...props} onChange={(e) => onChange(e.target.value)} />
            );
          })}
          <Actions done={done} error={error}>
            <button type="submit" aria-disabled={busy || undefined}>{template ? 'Save' : 'Create template'}</button>
          </Actions>
        </form>
        <section aria-labelledby="preview">
          <h2 id="preview">Preview</h2>
          <PersonPicker workspaceId={workspaceId} label="Preview for" {...preview.picker} />
          {preview.error ? <p className="error" role="alert">{preview.error}</p> : preview.rendered ? <RenderedMessage channel={channel} rendered={preview.rendered} /> : <p className="muted" role="status">Rendering…</p>}
        </section>
      </div>
    </>
  );
}

