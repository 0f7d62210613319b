// Sign-in by the identity provider when Herald is set up for OIDC, or by pasting a session
// token (the link `npm start` prints signs in without this page). A pasted token is checked
// against the API before it is kept.
import { useEffect, useState, type FormEvent } from 'react';
import { signIn } from '../session';
import { oidcConfig, startOidc, type OidcConfig } from '../oidc';
import { FormError } from '../ui';

export function SignIn({ notice }: { notice: string }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [oidc, setOidc] = useState<OidcConfig | null>(null);
  const [oidcError, setOidcError] = useState('');
  const [redirecting, setRedirecting] = useState(false);
  useEffect(() => void oidcConfig().then(setOidc), []);

  const provider = async (cfg: OidcConfig) => {
    setOidcError('');
    setRedirecting(true);
    try {
      await startOidc(cfg);
    } catch (e) {
      setOidcError(`Could not reach the identity provider: ${e instanceof Error ? e.message : String(e)}`);
      setRedirecting(false);
    }
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError('');
    setBusy(true);
    try {
      // Checked here, without the client's 401 handling (which would sign out again).
      const r = await fetch('/api/v1/workspaces', { headers: { Authorization: `Bearer ${value.trim()}` } });
      if (r.ok) return signIn(value);
      setError(r.status === 401 || r.status === 403 ? 'Herald did not accept this token: it is expired, signed with another secret, or an API key.' : `Herald answered ${r.status}.`);
    } catch {
      setError('Herald did not answer (network error). Check that it is running.');
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="card">
      <h1 tabIndex={-1}>Sign in to Herald</h1>
      {notice && <p className="notice" role="status">{notice}</p>}
      {oidc && (
        <div className="oidc">
          <button type="button" disabled={redirecting} onClick={() => void provider(oidc)}>
            {redirecting ? 'Going to the identity provider…' : `Sign in with ${new URL(oidc.issuer).host}`}
          </button>
          <FormError error={oidcError} />
          <p className="muted">Or paste a session token:</p>
        </div>
      )}
      <p>
        On a local Herald, open the sign-in link <code>npm start</code> prints, or paste the session token printed beside it
        (<code>herald token --user &lt;id&gt;</code> makes one).
      </p>
      <form onSubmit={(e) => void submit(e)}>
        <div className="field">
          <label htmlFor="token">Session token</label>
          <textarea id="token" rows={4} required spellCheck={false} autoComplete="off" value={value} onChange={(e) => setValue(e.target.value)} />
        </div>
        <FormError error={error} />
        <button type="submit" disabled={busy || !value.trim()}>{busy ? 'Checking…' : 'Sign in'}</button>
      </form>
    </div>
  );
}
