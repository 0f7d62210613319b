// What the channel sections share: a channel's state (configured, readable, its non-secret
// settings), the remove button, and a callback URL with its copy button.
import { useState } from 'react';
import { Actions, useSubmit } from '../ui';
import type { paths } from '../generated/openapi';

/** Every channel as GET /channels answers. */
export type AllChannels = paths['/workspaces/{workspaceId}/channels']['get']['responses'][200]['content']['application/json']['data'];

export function Status({ state, show }: { state: { configured: boolean; readable?: boolean }; show: [string, string][] }) {
  if (!state.configured) return <p><span className="badge">not configured</span></p>;
  if (state.readable === false) {
    return <p className="error">Stored, but sealed under another HERALD_SECRETS_KEY (or damaged): sends fail until it is set again.</p>;
  }
  return (
    <dl className="traits">
      {show.map(([k, v]) => (
        <div key={k}><dt>{k}</dt><dd>{v}</dd></div>
      ))}
    </dl>
  );
}

/** Remove a channel's settings (offered while `configured`), once confirmed: `consequence` says what stops. */
export function Remove({ what, configured, consequence, remove }: { what: string; configured: boolean; consequence: string; remove: () => Promise<void> }) {
  const { busy, done, error, submit } = useSubmit();
  const click = () => {
    if (!busy && confirm(`Remove the ${what} settings? ${consequence}`)) {
      void submit(async () => {
        await remove();
        return `${what.charAt(0).toUpperCase()}${what.slice(1)} removed.`;
      });
    }
  };
  return (
    <Actions done={done} error={error}>
      {configured && <button type="button" className="danger" aria-disabled={busy || undefined} onClick={click}>Remove {what}</button>}
    </Actions>
  );
}

/** A callback URL to paste into a provider's console, with where to paste it. */
export function CallbackUrl({ label, url, where }: { label: string; url: string; where: string }) {
  const [copied, setCopied] = useState('');
  const copy = () =>
    navigator.clipboard.writeText(url).then(
      () => setCopied('Copied.'),
      () => setCopied('Copying is not allowed here: select the URL and copy it.'),
    );
  return (
    <div className="field">
      <label htmlFor={`${label}-url`.replace(/\W+/g, '-')}>{label}</label>
      <div className="inline url">
        <input id={`${label}-url`.replace(/\W+/g, '-')} readOnly value={url} onFocus={(e) => e.target.select()} spellCheck={false} aria-describedby={`${label}-where`.replace(/\W+/g, '-')} />
        <button type="button" onClick={() => void copy()}>Copy<span className="sr-only"> {label}</span></button>
      </div>
      <small id={`${label}-where`.replace(/\W+/g, '-')} className="muted">{where}</small>
      <p role="status">{copied}</p>
    </div>
  );
}
