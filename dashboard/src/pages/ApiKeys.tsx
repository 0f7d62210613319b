// API keys: create (permission picker that knows which names a public key may hold), the
// new credential shown once with a copy button, usage per day, an edit of the name,
// description, permissions and IP allowlist (entries that can never match are reported),
// refresh and revoke; and the browser SDK's snippet for this host.
import { useState, type FormEvent } from 'react';
import { api, call, type Schemas } from '../api';
import { Link } from '../router';
import { GRANTABLE_PERMISSIONS, PUBLIC_KEY_PERMISSIONS } from '../../../src/auth/permissions.js';
import { SdkSnippet } from './sdk-snippet';
import { Actions, Empty, Field, Loaded, ShownOnce, TableBox, TextField, describe, fieldError, useLoad, useSubmit, when } from '../ui';

type Key = Schemas['ApiKey'];
type KeyType = Key['key_type'];
const PUBLIC: readonly string[] = PUBLIC_KEY_PERMISSIONS;
/** The allowlist as typed (one entry a line, or separated by commas or spaces). */
const entries = (text: string) => text.split(/[\s,]+/).filter(Boolean);
const ALLOWLIST_HINT = 'IPs or CIDR blocks (10.0.0.0/8), one a line; empty: any address';

export function ApiKeys({ workspaceId }: { workspaceId: string }) {
  const [load, retry] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/api-keys', { params: { path: { workspaceId } } })), [workspaceId]);
  /** A credential just made (created or refreshed): shown once. */
  const [secret, setSecret] = useState<{ name: string; credential: string } | null>(null);
  const [usageOf, setUsageOf] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [rowError, setRowError] = useState('');
  /** Herald's warning on the last save (allowlist entries that can never match). */
  const [warning, setWarning] = useState('');
  const edited = editing && load.state === 'done' ? load.data.api_keys.find((k) => k.id === editing) : undefined;

  const refresh = async (k: Key) => {
    if (!confirm(`Replace the secret of “${k.name}”? The current secret stops working at once.`)) return;
    setRowError('');
    try {
      const r = await call(api.POST('/workspaces/{workspaceId}/api-keys/{keyId}/refresh', { params: { path: { workspaceId, keyId: k.id } } }));
      setSecret({ name: k.name, credential: r.api_key.key });
      retry();
    } catch (e) {
      setRowError(`Could not refresh “${k.name}”: ${describe(e)}`);
    }
  };
  const revoke = async (k: Key) => {
    if (!confirm(`Revoke “${k.name}”? Requests with it are refused at once; this cannot be undone.`)) return;
    setRowError('');
    try {
      await call(api.DELETE('/workspaces/{workspaceId}/api-keys/{keyId}', { params: { path: { workspaceId, keyId: k.id } } }));
      if (usageOf === k.id) setUsageOf(null);
      retry();
    } catch (e) {
      setRowError(`Could not revoke “${k.name}”: ${describe(e)}`);
    }
  };

  return (
    <>
      <h1 tabIndex={-1}>API keys</h1>
      <p>Events from Herald to your own systems: <Link to={`/w/${workspaceId}/webhooks`}>Webhooks</Link>.</p>
      {secret && <ShownOnce id="new-secret" heading={`The key “${secret.name}”`} note="Copy it now: Herald keeps only a hash and will never show it again." what="API key" value={secret.credential} onDone={() => setSecret(null)} />}
      <Actions done="" error={rowError} />
      {warning && <p className="notice" role="status">{warning}</p>}
      <Loaded load={load} retry={retry} what="API keys">
        {(r) =>
          r.api_keys.length === 0 ? (
            <Empty title="No API keys yet.">
              <p>Create one below: a secret key for your servers (identify, track, send), or a public key for apps and browsers.</p>
            </Empty>
          ) : (
            <TableBox label="API keys">
              <table>
                <caption className="sr-only">API keys</caption>
                <thead>
                  <tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Permissions</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Actions</th></tr>
                </thead>
                <tbody>
                  {r.api_keys.map((k) => (
                    <tr key={k.id}>
                      <td>
                        {k.name}
                        {k.description && <div>{k.description}</div>}
                        <div className="muted">{k.key_type} · {k.environment}{k.expires_at && <> · expires {when(k.expires_at)}</>}</div>
                        {k.ip_whitelist.length > 0 && <div className="muted">from {k.ip_whitelist.join(', ')}</div>}
                      </td>
                      <td><code>{k.key_prefix}</code></td>
                      <td>{k.permissions.join(', ')}</td>
                      <td>{when(k.created_at)}</td>
                      <td>{when(k.last_used_at)}</td>
                      <td className="actions">
                        <button type="button" aria-expanded={usageOf === k.id} onClick={() => setUsageOf(usageOf === k.id ? null : k.id)}>Usage<span className="sr-only"> of {k.name}</span></button>
                        <button type="button" aria-expanded={editing === k.id} onClick={() => setEditing(editing === k.id ? null : k.id)}>Edit<span className="sr-only"> {k.name}</span></button>
                        <button type="button" onClick={() => void refresh(k)}>Refresh<span className="sr-only"> {k.name}</span></button>
                        <button type="button" className="danger" onClick={() => void revoke(k)}>Revoke<span className="sr-only"> {k.name}</span></button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableBox>
          )
        }
      </Loaded>
      {edited && (
        <EditKey
          key={edited.id}
          workspaceId={workspaceId}
          apiKey={edited}
          onSaved={(w) => {
            setWarning(w ?? '');
            setEditing(null);
            retry();
          }}
        />
      )}
      {load.state === 'done' && <SdkSnippet keys={load.data.api_keys} justCreated={secret?.credential ?? null} />}
      {usageOf && load.state === 'done' && <Usage workspaceId={workspaceId} keyId={usageOf} name={load.data.api_keys.find((k) => k.id === usageOf)?.name ?? ''} />}
      <CreateKey
        workspaceId={workspaceId}
        onCreated={(name, credential, w) => {
          setSecret({ name, credential });
          setWarning(w);
          retry();
        }}
      />
    </>
  );
}

function Usage({ workspaceId, keyId, name }: { workspaceId: string; keyId: string; name: string }) {
  const [load, retry] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/api-keys/{keyId}/usage', { params: { path: { workspaceId, keyId } } })), [workspaceId, keyId]);
  return (
    <section aria-labelledby="usage">
      <h2 id="usage">Usage of “{name}”</h2>
      <Loaded load={load} retry={retry} what="usage">
        {({ usage }) =>
          usage.total_requests === 0 ? (
            <Empty title="Not used yet.">
              <p>Requests made with this key are counted here by day and by route.</p>
            </Empty>
          ) : (
            <>
              <p>{usage.total_requests} requests; last {when(usage.last_used_at)}.</p>
              <DayChart days={usage.by_day} />
              <table>
                <caption>Requests by route</caption>
                <thead><tr><th scope="col">Route</th><th scope="col">Requests</th></tr></thead>
                <tbody>
                  {Object.entries(usage.by_route).map(([route, n]) => <tr key={route}><td><code>{route}</code></td><td>{n}</td></tr>)}
                </tbody>
              </table>
            </>
          )
        }
      </Loaded>
    </section>
  );
}

/** Requests per day as bars (SVG: no inline styles, which the CSP forbids), with the numbers as a table for screen readers. */
function DayChart({ days }: { days: { date: string; requests: number }[] }) {
  const max = Math.max(1, ...days.map((d) => d.requests));
  const w = 24;
  return (
    <figure>
      <svg className="chart" viewBox={`0 0 ${days.length * w} 100`} role="img" aria-label={`Requests per day, ${days.length} days`} preserveAspectRatio="none">
        {days.map((d, i) => {
          const h = (d.requests / max) * 95;
          return <rect key={d.date} x={i * w + 2} y={100 - h} width={w - 4} height={h}><title>{`${d.date}: ${d.requests}`}</title></rect>;
        })}
      </svg>
      <figcaption>
        <details>
          <summary>Requests per day</summary>
          <table>
            <thead><tr><th scope="col">Day</th><th scope="col">Requests</th></tr></thead>
            <tbody>{days.map((d) => <tr key={d.date}><td>{d.date}</td><td>{d.requests}</td></tr>)}</tbody>
          </table>
        </details>
      </figcaption>
    </figure>
  );
}

/**
 * The permission names a key of `keyType` may hold, as checkboxes; `error` is Herald's message
 * for the field. A public key is offered only its three.
 */
function PermissionPicker({ keyType, permissions, set, error, id }: { keyType: KeyType; permissions: string[]; set: (ps: string[]) => void; error?: string; id: string }) {
  const allowed = keyType === 'public' ? PUBLIC : GRANTABLE_PERMISSIONS;
  const toggle = (p: string, on: boolean) => set(on ? [...permissions, p] : permissions.filter((x) => x !== p));
  return (
    <fieldset aria-describedby={error ? `${id}-error` : `${id}-hint`}>
      <legend>Permissions</legend>
      <p id={`${id}-hint`} className="muted">
        {keyType === 'public' ? 'None chosen: the key gets all three.' : 'Choose at least one; * opens every key route.'}
      </p>
      <div className="checks">
        {allowed.map((p) => (
          <label key={p}><input type="checkbox" checked={permissions.includes(p)} onChange={(e) => toggle(p, e.target.checked)} /> <code>{p}</code></label>
        ))}
      </div>
      {error && <small id={`${id}-error`} className="error">{error}</small>}
    </fieldset>
  );
}

/** A key's name, description, permissions and IP allowlist, saved with one PUT (its kind and secret stay). */
function EditKey({ workspaceId, apiKey, onSaved }: { workspaceId: string; apiKey: Key; onSaved: (warning?: string) => void }) {
  const [name, setName] = useState(apiKey.name);
  const [description, setDescription] = useState(apiKey.description ?? '');
  const [permissions, setPermissions] = useState<string[]>(apiKey.permissions);
  const [text, setText] = useState(apiKey.ip_whitelist.join('\n'));
  const { busy, done, error, fields, submit } = useSubmit();
  const save = (e: FormEvent) => {
    e.preventDefault();
    void submit(async () => {
      const body = { name, description, permissions, ip_whitelist: entries(text) };
      const r = await call(api.PUT('/workspaces/{workspaceId}/api-keys/{keyId}', { params: { path: { workspaceId, keyId: apiKey.id } }, body }));
      onSaved(r.warning);
    });
  };
  return (
    <section aria-labelledby="edit-key">
      <h2 id="edit-key">Edit “{apiKey.name}”</h2>
      <p className="muted">A {apiKey.key_type} key; its secret stays the same. A change applies to the next request made with it.</p>
      <form onSubmit={save}>
        <Field label="Name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} error={fields.name} />
        <Field label="Description (optional)" value={description} onChange={(e) => setDescription(e.target.value)} maxLength={1000} error={fields.description} />
        <PermissionPicker id="edit-permissions" keyType={apiKey.key_type} permissions={permissions} set={setPermissions} error={fields.permissions} />
        <TextField label="Allowed addresses" rows={4} spellCheck={false} value={text} onChange={(e) => setText(e.target.value)} hint={ALLOWLIST_HINT} error={fieldError(fields, 'ip_whitelist')} />
        <Actions done={done} error={error}>
          <button type="submit" aria-disabled={busy || undefined}>{busy ? 'Saving…' : 'Save key'}</button>
        </Actions>
      </form>
    </section>
  );
}

function CreateKey({ workspaceId, onCreated }: { workspaceId: string; onCreated: (name: string, key: string, warning: string) => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  /** A `datetime-local` value (the browser's time zone), or empty: never expires. */
  const [expires, setExpires] = useState('');
  const [keyType, setKeyType] = useState<KeyType>('secret');
  const [environment, setEnvironment] = useState<Key['environment']>('live');
  const [permissions, setPermissions] = useState<string[]>([]);
  const [allowlist, setAllowlist] = useState('');
  const { busy, done, error, fields, submit } = useSubmit();
  const chooseType = (t: KeyType) => {
    setKeyType(t);
    setPermissions((ps) => (t === 'public' ? ps.filter((p) => PUBLIC.includes(p)) : ps));
  };
  const create = (e: FormEvent) => {
    e.preventDefault();
    void submit(async () => {
      const body = {
        name, key_type: keyType, environment, permissions,
        ...(description ? { description } : {}),
        ...(expires ? { expires_at: new Date(expires).toISOString() } : {}),
        ...(allowlist.trim() ? { ip_whitelist: entries(allowlist) } : {}),
      };
      const r = await call(api.POST('/workspaces/{workspaceId}/api-keys', { params: { path: { workspaceId } }, body }));
      // The warning always says to store the key (the page says so); what else it says is about the allowlist.
      onCreated(r.api_key.name, r.api_key.key, r.warning.replace(/^Store this key now:[^.]*\.\s*/, ''));
      setName('');
      setAllowlist('');
      setDescription('');
      setExpires('');
      setPermissions([]);
    });
  };
  return (
    <section aria-labelledby="create-key">
      <h2 id="create-key">Create an API key</h2>
      <form onSubmit={create}>
        <Field label="Name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} error={fields.name} />
        <Field label="Description (optional)" value={description} onChange={(e) => setDescription(e.target.value)} maxLength={1000} error={fields.description} />
        <Field label="Expires (optional)" type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} hint="Your local time; empty: never" error={fields.expires_at} />
        <TextField label="IP allowlist (optional)" rows={3} spellCheck={false} value={allowlist} onChange={(e) => setAllowlist(e.target.value)} hint={ALLOWLIST_HINT} error={fieldError(fields, 'ip_whitelist')} />
        <fieldset>
          <legend>Kind</legend>
          <label><input type="radio" name="key_type" checked={keyType === 'secret'} onChange={() => chooseType('secret')} /> Secret (servers: any permission)</label>
          <label><input type="radio" name="key_type" checked={keyType === 'public'} onChange={() => chooseType('public')} /> Public (apps and browsers: {PUBLIC.join(', ')})</label>
        </fieldset>
        <fieldset>
          <legend>Environment</legend>
          <label><input type="radio" name="environment" checked={environment === 'live'} onChange={() => setEnvironment('live')} /> live</label>
          <label><input type="radio" name="environment" checked={environment === 'test'} onChange={() => setEnvironment('test')} /> test</label>
        </fieldset>
        <PermissionPicker id="permissions" keyType={keyType} permissions={permissions} set={setPermissions} error={fields.permissions} />
        <Actions done={done} error={error}>
          <button type="submit" aria-disabled={busy || undefined}>{busy ? 'Creating…' : 'Create key'}</button>
        </Actions>
      </form>
    </section>
  );
}
