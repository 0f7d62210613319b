// Suppressions: what Herald must not send to. One tab a kind: push tokens today (list newest
// first with tokens masked, paged; add; lift). Email and SMS addresses join as a second entry
// of KINDS once Herald serves their routes.
import { useEffect, useState, type FormEvent } from 'react';
import { api, call, type Schemas } from '../api';
import { Link, navigate, useRoute, withQuery } from '../router';
import { PUSH_PLATFORMS, SUPPRESSION_TYPES } from '../../../src/domain/tokens.js';
import { Empty, Field, FormError, Loaded, Pager, TableBox, describe, useLoad, useSubmit, when } from '../ui';

const KINDS = [{ kind: 'tokens', label: 'Push tokens' }] as const;
const LIMIT = 25;
type Suppression = Schemas['ListedSuppression'];
interface Body {
  device_token: string;
  platform: (typeof PUSH_PLATFORMS)[number];
  suppression_type: (typeof SUPPRESSION_TYPES)[number];
}

export function Suppressions({ workspaceId }: { workspaceId: string }) {
  const { query } = useRoute();
  const kind = KINDS.find((k) => k.kind === query.get('kind')) ?? KINDS[0];
  return (
    <>
      <h1 tabIndex={-1}>Suppressions</h1>
      <nav className="tabs" aria-label="Kinds of suppression">
        {KINDS.map((k) => (
          <Link key={k.kind} to={`/w/${workspaceId}/suppressions${withQuery(new URLSearchParams(), { kind: k.kind })}`} aria-current={k === kind ? 'page' : undefined}>
            {k.label}
          </Link>
        ))}
      </nav>
      <TokenSuppressions workspaceId={workspaceId} />
    </>
  );
}

function TokenSuppressions({ workspaceId }: { workspaceId: string }) {
  const { query } = useRoute();
  const offset = Math.max(0, Number(query.get('offset')) || 0);
  const [load, retry] = useLoad(
    () => call(api.GET('/workspaces/{workspaceId}/push/suppressions', { params: { path: { workspaceId }, query: { limit: LIMIT, offset } } })),
    [workspaceId, offset],
  );
  const [rowError, setRowError] = useState('');
  const go = (o: number) => navigate(`/w/${workspaceId}/suppressions${withQuery(query, { offset: o })}`);
  // A page emptied by lifting its last row: the one before.
  const emptied = load.state === 'done' && load.data.suppressions.length === 0 && offset > 0;
  useEffect(() => {
    if (emptied) navigate(`/w/${workspaceId}/suppressions${withQuery(query, { offset: Math.max(0, offset - LIMIT) })}`, { replace: true });
  });

  const lift = async (x: Suppression) => {
    if (!confirm(`Lift the suppression of ${x.device_token} (${x.suppression_type})? Sends to it resume.`)) return;
    setRowError('');
    try {
      await call(api.DELETE('/workspaces/{workspaceId}/push/suppressions/{id}', { params: { path: { workspaceId, id: x.id } } }));
    } catch (e) {
      setRowError(`Could not lift it: ${describe(e)}`);
    }
    retry();
  };

  return (
    <section aria-labelledby="tokens">
      <h2 id="tokens">Suppressed push tokens</h2>
      <p className="muted">A push to a suppressed token is skipped. Herald adds the tokens providers report dead; you add and lift them here.</p>
      <FormError error={rowError} />
      <Loaded load={load} retry={retry} what="suppressions">
        {(r) =>
          r.total === 0 ? (
            <Empty title="No token is suppressed.">
              <p>Pushes go to every active device. Suppress a token below to stop sends to it (an uninstalled app, a user who opted out).</p>
            </Empty>
          ) : (
            <>
              <TableBox label="Suppressed push tokens">
                <table>
                  <caption className="sr-only">Suppressed push tokens, newest first</caption>
                  <thead>
                    <tr><th scope="col">Token</th><th scope="col">Platform</th><th scope="col">Why</th><th scope="col">Since</th><th scope="col">Actions</th></tr>
                  </thead>
                  <tbody>
                    {r.suppressions.map((x) => (
                      <tr key={x.id}>
                        <td><code>{x.device_token}</code></td>
                        <td>{x.platform}</td>
                        <td>{x.suppression_type}{x.reason && <div className="muted">{x.reason}</div>}</td>
                        <td>{when(x.suppressed_at)}</td>
                        <td className="actions">
                          <button type="button" onClick={() => void lift(x)}>Lift<span className="sr-only"> {x.device_token} {x.suppression_type}</span></button>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableBox>
              <Pager offset={offset} limit={LIMIT} total={r.total} go={go} />
            </>
          )
        }
      </Loaded>
      <SuppressToken workspaceId={workspaceId} onAdded={retry} />
    </section>
  );
}

function SuppressToken({ workspaceId, onAdded }: { workspaceId: string; onAdded: () => void }) {
  const [form, setForm] = useState<Body>({ device_token: '', platform: 'android', suppression_type: 'opt_out' });
  const [reason, setReason] = useState('');
  const [notice, setNotice] = useState('');
  const { busy, error, fields, submit } = useSubmit();
  const add = (e: FormEvent) => {
    e.preventDefault();
    setNotice('');
    void submit(async () => {
      const r = await call(api.POST('/workspaces/{workspaceId}/push/suppressions', { params: { path: { workspaceId } }, body: { ...form, device_token: form.device_token.trim(), ...(reason ? { reason } : {}) } }));
      setNotice(r.already_suppressed ? `${r.device_token} was suppressed as ${r.suppression_type} already.` : `${r.device_token} suppressed.`);
      setForm({ ...form, device_token: '' });
      setReason('');
      onAdded();
    });
  };
  return (
    <section aria-labelledby="suppress-token">
      <h3 id="suppress-token">Suppress a token</h3>
      <form onSubmit={add}>
        <Field label="Device token" value={form.device_token} onChange={(e) => setForm({ ...form, device_token: e.target.value })} required spellCheck={false} autoComplete="off" error={fields.device_token} />
        <div className="field">
          <label htmlFor="suppress-platform">Platform</label>
          <select id="suppress-platform" value={form.platform} onChange={(e) => setForm({ ...form, platform: e.target.value as Body['platform'] })}>
            {PUSH_PLATFORMS.map((p) => <option key={p} value={p}>{p}</option>)}
          </select>
        </div>
        <div className="field">
          <label htmlFor="suppress-type">Why</label>
          <select id="suppress-type" value={form.suppression_type} onChange={(e) => setForm({ ...form, suppression_type: e.target.value as Body['suppression_type'] })} aria-invalid={fields.suppression_type ? true : undefined}>
            {SUPPRESSION_TYPES.map((t) => <option key={t} value={t}>{t.replace('_', ' ')}</option>)}
          </select>
        </div>
        <Field label="Reason (optional)" value={reason} onChange={(e) => setReason(e.target.value)} maxLength={1000} error={fields.reason} />
        <FormError error={error} />
        <p role="status">{notice}</p>
        <button type="submit" disabled={busy}>{busy ? 'Suppressing…' : 'Suppress token'}</button>
      </form>
    </section>
  );
}
