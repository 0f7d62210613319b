// Suppressions: what Herald must not send to. One tab a kind: push tokens (masked) and email
// addresses and phone numbers (one channel at a time; docs/channels.md): list newest first, paged,
// searched by the start of the token or address (kept in the address); add; lift.
import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { api, call, type Schemas } from '../api';
import type { paths } from '../generated/openapi';
import { Link, navigate, useRoute, withQuery } from '../router';
import { ADDRESS_CHANNELS, PUSH_PLATFORMS, TOKEN_SUPPRESSION_TYPES, type AddressChannel, type PushPlatform, type TokenSuppressionType } from '../enums';
import { Actions, Empty, Field, Loaded, Pager, SearchForm, TableBox, describe, useLoad, useSubmit, when } from '../ui';

const KINDS = [
  { kind: 'tokens', label: 'Push tokens' },
  { kind: 'addresses', label: 'Email and SMS' },
] as const;
const CHANNEL_LABEL: Record<AddressChannel, string> = { email: 'Email addresses', sms: 'Phone numbers' };
const LIMIT = 25;
type Suppression = Schemas['ListedSuppression'];
type Address = paths['/workspaces/{workspaceId}/suppressions']['get']['responses'][200]['content']['application/json']['suppressions'][number];
interface Body {
  device_token: string;
  platform: PushPlatform;
  suppression_type: TokenSuppressionType;
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
      {kind.kind === 'tokens' ? <TokenSuppressions workspaceId={workspaceId} /> : <AddressSuppressions workspaceId={workspaceId} />}
    </>
  );
}

/** A page of a list in the URL's offset and search (`q`), going back a page when lifting emptied this one. */
function usePage<T extends { total: number }>(workspaceId: string, fetch: (offset: number, q: string | undefined) => Promise<T>, rows: (r: T) => unknown[], deps: unknown[]) {
  const { query } = useRoute();
  const offset = Math.max(0, Number(query.get('offset')) || 0);
  const q = query.get('q') ?? '';
  const [load, retry] = useLoad(() => fetch(offset, q || undefined), [workspaceId, offset, q, ...deps]);
  const to = (changes: Record<string, string | number | undefined>) => `/w/${workspaceId}/suppressions${withQuery(query, changes)}`;
  const go = (o: number) => navigate(to({ offset: o }));
  const search = (text: string) => navigate(to({ q: text || undefined, offset: undefined }));
  const emptied = load.state === 'done' && rows(load.data).length === 0 && offset > 0;
  useEffect(() => {
    if (emptied) navigate(to({ offset: Math.max(0, offset - LIMIT) }), { replace: true });
  });
  const [rowError, setRowError] = useState('');
  /** Lift one, once confirmed; a failure is said above the list. */
  const lift = async (what: string, remove: () => Promise<unknown>) => {
    if (!confirm(`Lift the suppression of ${what}? Sends to it resume.`)) return;
    setRowError('');
    try {
      await remove();
    } catch (e) {
      setRowError(`Could not lift it: ${describe(e)}`);
    }
    retry();
  };
  return { offset, q, load, retry, go, search, rowError, lift };
}

interface Column<T> {
  head: string;
  cell: (x: T) => ReactNode;
}

/**
 * A suppression list: its search box, the rows of the page with a Lift button each, paging, and
 * what to say when there are none (`empty`) or none match the search.
 */
function SuppressionTable<T extends { id: string }>({ label, searchLabel, searchHint, page, items, columns, what, lift, empty }: {
  label: string;
  searchLabel: string;
  searchHint: string;
  page: ReturnType<typeof usePage<{ total: number; suppressions: T[] }>>;
  items: string;
  columns: Column<T>[];
  /** How a row is named in its Lift button and the confirmation. */
  what: (x: T) => string;
  lift: (x: T) => Promise<unknown>;
  empty: ReactNode;
}) {
  const { offset, q, load, retry, go, search, rowError } = page;
  return (
    <>
      <SearchForm label={searchLabel} hint={searchHint} value={q} search={search} />
      <Actions done="" error={rowError} />
      <Loaded load={load} retry={retry} what={items}>
        {(r) =>
          r.total === 0 ? (
            q ? (
              <Empty title={`No ${items} start with “${q}”.`}>
                <p><button type="button" className="link" onClick={() => search('')}>Clear the search</button></p>
              </Empty>
            ) : (
              empty
            )
          ) : (
            <>
              <TableBox label={label}>
                <table>
                  <caption className="sr-only">{label}{q ? ` starting with “${q}”` : ''}, newest first</caption>
                  <thead>
                    <tr>
                      {columns.map((c) => <th key={c.head} scope="col">{c.head}</th>)}
                      <th scope="col">Actions</th>
                    </tr>
                  </thead>
                  <tbody>
                    {r.suppressions.map((x) => (
                      <tr key={x.id}>
                        {columns.map((c) => <td key={c.head}>{c.cell(x)}</td>)}
                        <td className="actions">
                          <button type="button" onClick={() => void page.lift(what(x), () => lift(x))}>Lift<span className="sr-only"> {what(x)}</span></button>
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
    </>
  );
}

/** The suppression's type and reason. */
const why = (x: { suppression_type: string; reason: string | null }) => (
  <>{x.suppression_type.replace('_', ' ')}{x.reason && <div className="muted">{x.reason}</div>}</>
);

function TokenSuppressions({ workspaceId }: { workspaceId: string }) {
  const page = usePage(
    workspaceId,
    (offset, q) => call(api.GET('/workspaces/{workspaceId}/push/suppressions', { params: { path: { workspaceId }, query: { limit: LIMIT, offset, q } } })),
    (r) => r.suppressions,
    [],
  );
  return (
    <section aria-labelledby="tokens">
      <h2 id="tokens">Suppressed push tokens</h2>
      <p className="muted">A push to a suppressed token is skipped. Herald adds the tokens providers report dead; you add and lift them here.</p>
      <SuppressionTable<Suppression>
        label="Suppressed push tokens"
        searchLabel="Search tokens"
        searchHint="The start of the token, as your app logged it (tokens are shown masked)"
        page={page}
        items="tokens"
        columns={[
          { head: 'Token', cell: (x) => <code>{x.device_token}</code> },
          { head: 'Platform', cell: (x) => x.platform },
          { head: 'Why', cell: why },
          { head: 'Since', cell: (x) => when(x.suppressed_at) },
        ]}
        what={(x) => `${x.device_token} (${x.suppression_type})`}
        lift={(x) => call(api.DELETE('/workspaces/{workspaceId}/push/suppressions/{id}', { params: { path: { workspaceId, id: x.id } } }))}
        empty={
          <Empty title="No token is suppressed.">
            <p>Pushes go to every active device. Suppress a token below to stop sends to it (an uninstalled app, a user who opted out).</p>
          </Empty>
        }
      />
      <SuppressToken workspaceId={workspaceId} onAdded={page.retry} />
    </section>
  );
}

function SuppressToken({ workspaceId, onAdded }: { workspaceId: string; onAdded: () => void }) {
  const [form, setForm] = useState<Body>({ device_token: '', platform: 'android', suppression_type: 'opt_out' });
  const [reason, setReason] = useState('');
  const { busy, done, error, fields, submit } = useSubmit();
  const add = (e: FormEvent) => {
    e.preventDefault();
    void submit(async () => {
      const r = await call(api.POST('/workspaces/{workspaceId}/push/suppressions', { params: { path: { workspaceId } }, body: { ...form, device_token: form.device_token.trim(), ...(reason ? { reason } : {}) } }));
      setForm({ ...form, device_token: '' });
      setReason('');
      onAdded();
      return r.already_suppressed ? `${r.device_token} was suppressed as ${r.suppression_type} already.` : `${r.device_token} suppressed.`;
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
            {TOKEN_SUPPRESSION_TYPES.map((t) => <option key={t} value={t}>{t.replace('_', ' ')}</option>)}
          </select>
        </div>
        <Field label="Reason (optional)" value={reason} onChange={(e) => setReason(e.target.value)} maxLength={1000} error={fields.reason} />
        <Actions done={done} error={error}>
          <button type="submit" aria-disabled={busy || undefined}>{busy ? 'Suppressing…' : 'Suppress token'}</button>
        </Actions>
      </form>
    </section>
  );
}

function AddressSuppressions({ workspaceId }: { workspaceId: string }) {
  const { query } = useRoute();
  const channel = ADDRESS_CHANNELS.find((c) => c === query.get('channel')) ?? 'email';
  const page = usePage(
    workspaceId,
    (offset, q) => call(api.GET('/workspaces/{workspaceId}/suppressions', { params: { path: { workspaceId }, query: { channel, limit: LIMIT, offset, q } } })),
    (r) => r.suppressions,
    [channel],
  );
  const label = CHANNEL_LABEL[channel];
  return (
    <section aria-labelledby="addresses">
      <h2 id="addresses">Suppressed {label.toLowerCase()}</h2>
      <p className="muted">An email or text message to a suppressed address is skipped. Herald adds hard bounces, complaints, invalid addresses and STOP replies; you add and lift them here.</p>
      <div className="field">
        <label htmlFor="address-channel">Channel</label>
        <select id="address-channel" value={channel} onChange={(e) => navigate(`/w/${workspaceId}/suppressions${withQuery(query, { channel: e.target.value, offset: 0, q: undefined })}`)}>
          {ADDRESS_CHANNELS.map((c) => <option key={c} value={c}>{CHANNEL_LABEL[c]}</option>)}
        </select>
      </div>
      <SuppressionTable<Address>
        label={`Suppressed ${label.toLowerCase()}`}
        searchLabel={channel === 'email' ? 'Search email addresses' : 'Search phone numbers'}
        searchHint={channel === 'email' ? 'The start of the address, in any case' : 'The start of the number in E.164, e.g. +1500'}
        page={page}
        items={channel === 'email' ? 'email addresses' : 'phone numbers'}
        columns={[
          { head: 'Address', cell: (x) => <code>{x.address}</code> },
          { head: 'Why', cell: why },
          { head: 'Since', cell: (x) => when(x.created_at) },
        ]}
        what={(x) => x.address}
        lift={(x) => call(api.DELETE('/workspaces/{workspaceId}/suppressions/{suppressionId}', { params: { path: { workspaceId, suppressionId: x.id } } }))}
        empty={
          <Empty title={`No ${channel === 'email' ? 'email address' : 'phone number'} is suppressed.`}>
            <p>Suppress one below to stop every send to it, whichever person it belongs to.</p>
          </Empty>
        }
      />
      <SuppressAddress workspaceId={workspaceId} channel={channel} onAdded={page.retry} />
    </section>
  );
}

function SuppressAddress({ workspaceId, channel, onAdded }: { workspaceId: string; channel: AddressChannel; onAdded: () => void }) {
  const [address, setAddress] = useState('');
  const [reason, setReason] = useState('');
  const { busy, done, error, fields, submit } = useSubmit();
  const add = (e: FormEvent) => {
    e.preventDefault();
    void submit(async () => {
      const r = await call(api.POST('/workspaces/{workspaceId}/suppressions', { params: { path: { workspaceId } }, body: { channel, address: address.trim(), suppression_type: 'manual', ...(reason ? { reason } : {}) } }));
      setAddress('');
      setReason('');
      onAdded();
      return `${r.suppression.address} suppressed.`;
    });
  };
  return (
    <section aria-labelledby="suppress-address">
      <h3 id="suppress-address">Suppress {channel === 'email' ? 'an email address' : 'a phone number'}</h3>
      <form onSubmit={add}>
        <Field
          label={channel === 'email' ? 'Email address' : 'Phone number'}
          type={channel === 'email' ? 'email' : 'tel'}
          value={address}
          onChange={(e) => setAddress(e.target.value)}
          required
          spellCheck={false}
          autoComplete="off"
          hint={channel === 'sms' ? 'E.164, e.g. +15005550006' : undefined}
          error={fields.address}
        />
        <Field label="Reason (optional)" value={reason} onChange={(e) => setReason(e.target.value)} maxLength={1000} error={fields.reason} />
        <Actions done={done} error={error}>
          <button type="submit" aria-disabled={busy || undefined}>{busy ? 'Suppressing…' : 'Suppress'}</button>
        </Actions>
      </form>
    </section>
  );
}
