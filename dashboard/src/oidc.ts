// OIDC sign-in (README, Dashboard): the Authorization Code flow with PKCE, run in the browser as a
// public client; the ID token is the session token (Herald verifies it with the issuer's keys).
// Herald's `config.json` names the issuer and the client id (no inline script can). Discovery
// and the token endpoint are fetched from the issuer (the CSP's connect-src names its origin);
// the authorization request is a navigation. What the way back needs (the verifier, state,
// nonce and the page to return to) waits in this tab's sessionStorage.
import { signIn, signOut } from './session';

export interface OidcConfig {
  issuer: string;
  client_id: string;
}

interface Pending {
  verifier: string;
  state: string;
  nonce: string;
  clientId: string;
  tokenEndpoint: string;
  /** The app address signing in started from, where the user goes back to. */
  returnTo: string;
}

const PENDING = 'herald.oidc';
/** Registered with the issuer as the client's redirect URI. */
const redirectUri = () => `${location.origin}/dashboard/`;

let config: Promise<OidcConfig | null> | undefined;

/** The issuer and client id when Herald signs in by OIDC, else null (asked once). */
export function oidcConfig(): Promise<OidcConfig | null> {
  config ??= fetch('/dashboard/config.json')
    .then((r) => (r.ok ? (r.json() as Promise<{ oidc: OidcConfig | null }>) : { oidc: null }))
    .then((c) => c.oidc, () => null);
  return config;
}

const base64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const random = () => base64url(crypto.getRandomValues(new Uint8Array(32)));

/** Goes to the issuer's sign-in page; comes back to `completeOidc`. */
export async function startOidc(cfg: OidcConfig): Promise<void> {
  const r = await fetch(`${cfg.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`);
  if (!r.ok) throw new Error(`the identity provider's discovery document answered ${r.status}`);
  const d = (await r.json()) as { authorization_endpoint: string; token_endpoint: string };
  const pending: Pending = { verifier: random(), state: random(), nonce: random(), clientId: cfg.client_id, tokenEndpoint: d.token_endpoint, returnTo: location.pathname + location.search };
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(pending.verifier))));
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
  const url = new URL(d.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: cfg.client_id,
    redirect_uri: redirectUri(),
    scope: 'openid email profile',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: pending.state,
    nonce: pending.nonce,
  }).toString();
  location.assign(url);
}

/** The ID token's claims (verified by Herald, not here: only the nonce is read). */
function claims(jwt: string): Record<string, unknown> {
  const payload = jwt.split('.')[1] ?? '';
  return JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as Record<string, unknown>;
}

/**
 * On the way back from the issuer (`?code&state` or `?error&state` with a sign-in pending in
 * this tab): trades the code for the ID token and signs in, or signs out saying why. The
 * address goes back at once to the page signing in started from, so the code leaves no trace.
 */
export async function completeOidc(): Promise<void> {
  const q = new URLSearchParams(location.search);
  const raw = sessionStorage.getItem(PENDING);
  if (!raw || !q.has('state') || !(q.has('code') || q.has('error'))) return;
  sessionStorage.removeItem(PENDING);
  const p = JSON.parse(raw) as Pending;
  history.replaceState(null, '', p.returnTo);
  try {
    if (q.get('state') !== p.state) throw new Error('the answer is not for the sign-in this tab started');
    if (q.has('error')) throw new Error(q.get('error_description') ?? q.get('error')!);
    const r = await fetch(p.tokenEndpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: q.get('code')!, redirect_uri: redirectUri(), client_id: p.clientId, code_verifier: p.verifier }),
    });
    const body = (await r.json().catch(() => ({}))) as { id_token?: string; error?: string; error_description?: string };
    if (!r.ok || !body.id_token) throw new Error(body.error_description ?? body.error ?? `the token endpoint answered ${r.status}`);
    if (claims(body.id_token).nonce !== p.nonce) throw new Error('the ID token is not for this sign-in (nonce)');
    signIn(body.id_token);
  } catch (e) {
    signOut(`Signing in with the identity provider failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}
