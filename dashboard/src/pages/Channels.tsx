// Channels: which providers are configured (never their secrets: Herald does not send them
// back). Push: set or replace FCM (the service-account JSON file) and APNs (the .p8 key and its
// ids), remove either. Email and SMS are in MessageChannels.tsx.
import { useState, type FormEvent } from 'react';
import { api, call, type Schemas } from '../api';
import type { paths } from '../generated/openapi';
import { Actions, Field, Loaded, useLoad, useSubmit } from '../ui';
import { Remove, Status } from './channel-parts';
import { Email, Sms } from './MessageChannels';

type Body = paths['/workspaces/{workspaceId}/channels/push']['put']['requestBody']['content']['application/json'];
type Channels = Schemas['PushChannels'];

export function Channels({ workspaceId }: { workspaceId: string }) {
  const [load, retry] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/channels', { params: { path: { workspaceId } } })), [workspaceId]);
  const put = async (body: Body) => {
    await call(api.PUT('/workspaces/{workspaceId}/channels/push', { params: { path: { workspaceId } }, body }));
    retry();
  };
  return (
    <>
      <h1 tabIndex={-1}>Channels</h1>
      <p>
        Without credentials, pushes, emails and text messages go through Herald's sandbox (nothing reaches a device or an inbox) unless the operator
        set <code>HERALD_PUSH_PROVIDER</code>, <code>HERALD_EMAIL_PROVIDER</code> or <code>HERALD_SMS_PROVIDER</code> to <code>live</code>. Keys,
        passwords and tokens are stored sealed and never shown again.
      </p>
      <Loaded load={load} retry={retry} what="the push channels">
        {({ data }) => (
          <>
            <h2>Push</h2>
            <div className="columns">
              <Fcm state={data.push.fcm} put={put} />
              <Apns state={data.push.apns} put={put} />
            </div>
            <div className="columns">
              <Email workspaceId={workspaceId} state={data.email} saved={retry} />
              <Sms workspaceId={workspaceId} state={data.sms} saved={retry} />
            </div>
          </>
        )}
      </Loaded>
    </>
  );
}

type Put = (body: Body) => Promise<void>;
const PUSH_STOPS = 'Pushes to those devices stop until they are set again.';

function Fcm({ state, put }: { state: Channels['channels']['fcm']; put: Put }) {
  const [file, setFile] = useState('');
  const [parseError, setParseError] = useState('');
  const { busy, done, error, fields, submit } = useSubmit();
  const save = (e: FormEvent) => {
    e.preventDefault();
    let account: unknown;
    try {
      account = JSON.parse(file);
      setParseError('');
    } catch {
      return setParseError('This is not JSON: paste the whole service-account key file.');
    }
    void submit(async () => {
      await put({ fcm: { service_account: account as never } });
      setFile('');
      return 'FCM saved.';
    });
  };
  const f = (k: string) => fields[`fcm.service_account.${k}`];
  const fieldErrors = ['type', 'project_id', 'private_key', 'client_email', 'token_uri'].filter((k) => f(k)).map((k) => `${k} ${f(k)}`);
  return (
    <section aria-labelledby="fcm">
      <h3 id="fcm">FCM (Android, web)</h3>
      <Status
        state={state}
        show={'project_id' in state ? [['Project', state.project_id], ['Client email', state.client_email], ['Key id', state.private_key_id ?? '—'], ['Token URI', state.token_uri]] : []}
      />
      <form onSubmit={save}>
        <div className="field">
          <label htmlFor="fcm-file">{state.configured ? 'Replace with a' : 'A'} service-account key file (JSON)</label>
          <textarea id="fcm-file" rows={5} spellCheck={false} required value={file} onChange={(e) => setFile(e.target.value)} aria-describedby="fcm-file-error" />
          <small id="fcm-file-error" className="error">{parseError || fieldErrors.join('; ')}</small>
        </div>
        <Actions done={done} error={error}>
          <button type="submit" aria-disabled={busy || undefined}>{busy ? 'Saving…' : 'Save FCM'}</button>
        </Actions>
      </form>
      <Remove what="FCM" configured={state.configured} consequence={PUSH_STOPS} remove={() => put({ fcm: null })} />
    </section>
  );
}

function Apns({ state, put }: { state: Channels['channels']['apns']; put: Put }) {
  const readable = 'key_id' in state ? state : null;
  const [keyP8, setKeyP8] = useState('');
  const [keyId, setKeyId] = useState(readable?.key_id ?? '');
  const [teamId, setTeamId] = useState(readable?.team_id ?? '');
  const [bundleId, setBundleId] = useState(readable?.bundle_id ?? '');
  const [production, setProduction] = useState(readable?.production ?? false);
  const { busy, done, error, fields, submit } = useSubmit();
  const save = (e: FormEvent) => {
    e.preventDefault();
    void submit(async () => {
      // An empty key keeps the stored one (the API keeps fields left out).
      await put({ apns: { key_id: keyId, team_id: teamId, bundle_id: bundleId, production, ...(keyP8 ? { key_p8: keyP8 } : {}) } });
      setKeyP8('');
      return 'APNs saved.';
    });
  };
  const f = (k: string) => fields[`apns.${k}`];
  return (
    <section aria-labelledby="apns">
      <h3 id="apns">APNs (iOS)</h3>
      <Status state={state} show={readable ? [['Key id', readable.key_id], ['Team id', readable.team_id], ['Bundle id', readable.bundle_id], ['Host', readable.production ? 'production' : 'sandbox']] : []} />
      <form onSubmit={save}>
        <div className="field">
          <label htmlFor="apns-key">The .p8 key{readable ? ' (empty: keep the stored one)' : ''}</label>
          <textarea id="apns-key" rows={4} spellCheck={false} required={!readable} value={keyP8} onChange={(e) => setKeyP8(e.target.value)} aria-describedby="apns-key-error" />
          <small id="apns-key-error" className="error">{f('key_p8')}</small>
        </div>
        <Field label="Key id" value={keyId} onChange={(e) => setKeyId(e.target.value)} required hint="10 upper-case letters and digits" error={f('key_id')} />
        <Field label="Team id" value={teamId} onChange={(e) => setTeamId(e.target.value)} required hint="10 upper-case letters and digits" error={f('team_id')} />
        <Field label="Bundle id" value={bundleId} onChange={(e) => setBundleId(e.target.value)} required hint="e.g. com.example.app" error={f('bundle_id')} />
        <label className="check">
          <input type="checkbox" checked={production} onChange={(e) => setProduction(e.target.checked)} /> Production (Apple's production host; otherwise its sandbox)
        </label>
        <Actions done={done} error={error}>
          <button type="submit" aria-disabled={busy || undefined}>{busy ? 'Saving…' : 'Save APNs'}</button>
        </Actions>
      </form>
      <Remove what="APNs" configured={state.configured} consequence={PUSH_STOPS} remove={() => put({ apns: null })} />
    </section>
  );
}
