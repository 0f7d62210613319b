// The email channel (an SMTP relay, the sender, how delivery callbacks are verified) and the SMS
// channel (Twilio; docs/channels.md): set, replace, remove; passwords, keys and the auth token are
// never shown back (left empty, the stored one is kept); the callback URLs to paste.
import { useState, type FormEvent } from 'react';
import { api, call } from '../api';
import type { paths } from '../generated/openapi';
import { Actions, Field, TextField, useSubmit } from '../ui';
import { EMAIL_PROVIDER_LABEL, EMAIL_PROVIDERS, SMTP_SECURITIES, SMTP_SECURITY_LABEL, type EmailProvider } from '../enums';
import { CallbackUrl, Remove, Status, type AllChannels } from './channel-parts';

type EmailBody = paths['/workspaces/{workspaceId}/channels/email']['put']['requestBody']['content']['application/json'];
type SmsBody = paths['/workspaces/{workspaceId}/channels/sms']['put']['requestBody']['content']['application/json'];
interface Props<S> {
  workspaceId: string;
  state: S;
  /** Called once a change is stored: the page asks for the channels again. */
  saved: () => void;
}

const WHERE: Record<EmailProvider, string> = {
  sendgrid: 'Paste it into SendGrid: Settings → Mail Settings → Event Webhook, as the HTTP Post URL, with the Signed Event Webhook on.',
  mailgun: 'Paste it into Mailgun: Sending → Webhooks, for delivered, permanent and temporary failure, spam complaints, opens and clicks.',
  postmark: "Paste it into Postmark: your server's Webhooks, with the basic auth user and password set above.",
};
/** An optional text: empty is none. */
const orNull = (v: string) => (v.trim() ? v.trim() : null);
/** A secret: empty keeps the stored one (the API keeps fields left out). */
const ifSet = <K extends string>(k: K, v: string) => (v ? ({ [k]: v } as Record<K, string>) : {});

export function Email({ workspaceId, state, saved }: Props<AllChannels['email']>) {
  const s = 'smtp' in state ? state : null;
  const [f, setF] = useState({
    host: s?.smtp.host ?? '',
    port: String(s?.smtp.port ?? 587),
    security: s?.smtp.security ?? 'starttls',
    username: s?.smtp.username ?? '',
    password: '',
    maxConnections: String(s?.smtp.max_connections ?? 5),
    rate: s?.smtp.rate_per_second == null ? '' : String(s.smtp.rate_per_second),
    fromEmail: s?.from.email ?? '',
    fromName: s?.from.name ?? '',
    replyTo: s?.reply_to ?? '',
    provider: (s?.webhooks?.provider ?? '') as EmailProvider | '',
    verificationKey: '',
    signingKey: '',
    hookUser: '',
    hookPassword: '',
  });
  const set = (k: keyof typeof f) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value });
  const { busy, done, error, fields, submit } = useSubmit();
  const put = async (body: EmailBody) => {
    await call(api.PUT('/workspaces/{workspaceId}/channels/email', { params: { path: { workspaceId } }, body }));
    saved();
  };
  const save = (e: FormEvent) => {
    e.preventDefault();
    const webhooks = f.provider
      ? { provider: f.provider, ...ifSet('verification_key', f.verificationKey), ...ifSet('signing_key', f.signingKey), ...ifSet('username', f.hookUser), ...ifSet('password', f.hookPassword) }
      : null;
    void submit(async () => {
      await put(
        {
          smtp: {
            host: f.host.trim(),
            port: Number(f.port),
            security: f.security,
            username: orNull(f.username),
            ...ifSet('password', f.password),
            max_connections: Number(f.maxConnections),
            rate_per_second: f.rate ? Number(f.rate) : null,
          },
          from: { email: f.fromEmail.trim(), name: orNull(f.fromName) },
          reply_to: orNull(f.replyTo),
          webhooks,
        },
      );
      setF((old) => ({ ...old, password: '', verificationKey: '', signingKey: '', hookPassword: '' }));
      return 'Email saved.';
    });
  };
  const keep = s ? ' (empty: keep the stored one)' : '';
  return (
    <section aria-labelledby="email-channel">
      <h2 id="email-channel">Email</h2>
      {state.configured ? null : state.sandbox ? <p className="muted">Until it is set, emails go to Herald's sandbox.</p> : null}
      <Status
        state={state}
        show={s ? [['SMTP relay', `${s.smtp.host}:${s.smtp.port} (${s.smtp.security})`], ['From', s.from.name ? `${s.from.name} <${s.from.email}>` : s.from.email], ['Reply-to', s.reply_to ?? '—'], ['Callbacks', s.webhooks?.provider ?? 'none']] : []}
      />
      {s?.webhooks && <CallbackUrl label={`${s.webhooks.provider} callback URL`} url={s.webhooks.url} where={WHERE[s.webhooks.provider]} />}
      <form onSubmit={save}>
        <Field label="SMTP host" value={f.host} onChange={set('host')} required spellCheck={false} hint="e.g. smtp.sendgrid.net. A relay on this machine or a private network (localhost, 10.x…) is refused unless the operator lists it in HERALD_ALLOWED_PRIVATE_HOSTS" error={fields['smtp.host']} />
        <Field label="Port" type="number" min={1} max={65535} value={f.port} onChange={set('port')} required hint="25, 465, 587 or 2525; another port only for a host the operator lists" error={fields['smtp.port']} />
        <div className="field">
          <label htmlFor="smtp-security">Security</label>
          <select id="smtp-security" value={f.security} onChange={set('security')}>
            {SMTP_SECURITIES.map((v) => <option key={v} value={v}>{SMTP_SECURITY_LABEL[v]}</option>)}
          </select>
        </div>
        <Field label="SMTP username (optional)" value={f.username} onChange={set('username')} autoComplete="off" error={fields['smtp.username']} />
        <Field label={`SMTP password${keep}`} type="password" value={f.password} onChange={set('password')} autoComplete="new-password" error={fields['smtp.password']} />
        <Field label="Connections at most" type="number" min={1} max={50} value={f.maxConnections} onChange={set('maxConnections')} required error={fields['smtp.max_connections']} />
        <Field label="Messages per second at most (optional)" type="number" min={0} step="any" value={f.rate} onChange={set('rate')} hint="Empty: as fast as the relay takes them" error={fields['smtp.rate_per_second']} />
        <Field label="From email" type="email" value={f.fromEmail} onChange={set('fromEmail')} required error={fields['from.email'] ?? fields.from} />
        <Field label="From name (optional)" value={f.fromName} onChange={set('fromName')} error={fields['from.name']} />
        <Field label="Reply-to (optional)" type="email" value={f.replyTo} onChange={set('replyTo')} error={fields.reply_to} />
        <div className="field">
          <label htmlFor="email-provider">Delivery callbacks from</label>
          <select id="email-provider" value={f.provider} onChange={set('provider')} aria-invalid={fields['webhooks.provider'] ? true : undefined}>
            <option value="">None (no delivery, bounce or complaint events)</option>
            {EMAIL_PROVIDERS.map((p) => <option key={p} value={p}>{EMAIL_PROVIDER_LABEL[p]}</option>)}
          </select>
        </div>
        {f.provider === 'sendgrid' && (
          <TextField label={`SendGrid verification key${keep}`} rows={3} spellCheck={false} value={f.verificationKey} onChange={set('verificationKey')} hint="The Signed Event Webhook's public key (PEM or base64)" error={fields['webhooks.verification_key']} />
        )}
        {f.provider === 'mailgun' && <Field label={`Mailgun signing key${keep}`} type="password" value={f.signingKey} onChange={set('signingKey')} autoComplete="off" error={fields['webhooks.signing_key']} />}
        {f.provider === 'postmark' && (
          <>
            <Field label={`Postmark webhook user${keep}`} value={f.hookUser} onChange={set('hookUser')} autoComplete="off" error={fields['webhooks.username']} />
            <Field label={`Postmark webhook password${keep}`} type="password" value={f.hookPassword} onChange={set('hookPassword')} autoComplete="new-password" error={fields['webhooks.password']} />
          </>
        )}
        <Actions done={done} error={error}>
          <button type="submit" aria-disabled={busy || undefined}>{busy ? 'Saving…' : 'Save email'}</button>
        </Actions>
      </form>
      <Remove what="email" configured={state.configured} consequence="Emails go to the sandbox or fail until it is set again." remove={() => put({ smtp: null })} />
    </section>
  );
}

export function Sms({ workspaceId, state, saved }: Props<AllChannels['sms']>) {
  const s = 'twilio' in state ? state : null;
  const [f, setF] = useState({
    sid: s?.twilio.account_sid ?? '',
    token: '',
    from: s?.twilio.from ?? '',
    service: s?.twilio.messaging_service_sid ?? '',
    country: s?.default_country ?? '',
  });
  const set = (k: keyof typeof f) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value });
  const { busy, done, error, fields, submit } = useSubmit();
  const put = async (body: SmsBody) => {
    await call(api.PUT('/workspaces/{workspaceId}/channels/sms', { params: { path: { workspaceId } }, body }));
    saved();
  };
  const save = (e: FormEvent) => {
    e.preventDefault();
    void submit(async () => {
      const twilio = { account_sid: f.sid.trim(), ...ifSet('auth_token', f.token), from: orNull(f.from), messaging_service_sid: orNull(f.service) };
      await put({ twilio, default_country: orNull(f.country.toUpperCase()) });
      setF((old) => ({ ...old, token: '' }));
      return 'SMS saved.';
    });
  };
  return (
    <section aria-labelledby="sms-channel">
      <h2 id="sms-channel">SMS (Twilio)</h2>
      {state.configured ? null : state.sandbox ? <p className="muted">Until it is set, text messages go to Herald's sandbox.</p> : null}
      <Status
        state={state}
        show={s ? [['Account', s.twilio.account_sid], ['From', s.twilio.from ?? s.twilio.messaging_service_sid ?? '—'], ['Default country', s.default_country ?? '—']] : []}
      />
      {'inbound_url' in state && (
        <>
          <CallbackUrl label="Inbound message URL" url={state.inbound_url} where={"Paste it into Twilio: your number's (or Messaging Service's) “A message comes in” webhook, HTTP POST. STOP and START replies are handled there."} />
          <CallbackUrl label="Status callback URL" url={state.status_callback_url} where="Nothing to paste: Herald sends it with every message as StatusCallback. Twilio must be able to reach it (HERALD_PUBLIC_URL)." />
        </>
      )}
      <form onSubmit={save}>
        <Field label="Account SID" value={f.sid} onChange={set('sid')} required spellCheck={false} hint="AC followed by 32 hex digits" error={fields['twilio.account_sid']} />
        <Field label={`Auth token${s ? ' (empty: keep the stored one)' : ''}`} type="password" value={f.token} onChange={set('token')} required={!s} autoComplete="new-password" error={fields['twilio.auth_token']} />
        <Field label="From number" value={f.from} onChange={set('from')} spellCheck={false} hint="E.164, e.g. +15005550006; or a Messaging Service below" error={fields['twilio.from']} />
        <Field label="Messaging Service SID" value={f.service} onChange={set('service')} spellCheck={false} hint="MG followed by 32 hex digits" error={fields['twilio.messaging_service_sid']} />
        <Field label="Default country (optional)" value={f.country} onChange={set('country')} maxLength={2} hint="ISO 3166 code, e.g. US: the country of numbers stored without +" error={fields.default_country} />
        <Actions done={done} error={error}>
          <button type="submit" aria-disabled={busy || undefined}>{busy ? 'Saving…' : 'Save SMS'}</button>
        </Actions>
      </form>
      <Remove what="SMS" configured={state.configured} consequence="Text messages go to the sandbox or fail until it is set again." remove={() => put({ twilio: null })} />
    </section>
  );
}
