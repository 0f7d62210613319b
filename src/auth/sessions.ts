// Dashboard session tokens: JWTs verified with jose, HS256 with a shared secret or OIDC
// through a JWKS URL (README, Sessions and the Default workspace). The user is `sub`; `exp` is required, at most 366 days out.
import { SignJWT, createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { SessionUser } from '../domain/principals.js';

/**
 * The longest a session token may live: `herald token --ttl` stops there, and a token whose exp
 * lies further from its iat (or from now) is refused, so no signed token is good for ever.
 */
const MAX_LIFETIME_SECONDS = 366 * 86_400;
/** The shortest `herald token --ttl`: a token expired before it is pasted is no use. */
const MIN_TTL_SECONDS = 60;

export type SessionVerifier = (token: string) => Promise<SessionUser | null>;

export type SessionAuthConfig =
  | { kind: 'hs256'; secret: string }
  | { kind: 'oidc'; jwksUrl: string; issuer?: string; audience?: string };

export function sessionVerifier(cfg: SessionAuthConfig): SessionVerifier {
  const key: Uint8Array | JWTVerifyGetKey = cfg.kind === 'hs256' ? new TextEncoder().encode(cfg.secret) : createRemoteJWKSet(new URL(cfg.jwksUrl));
  const options =
    cfg.kind === 'hs256'
      ? { algorithms: ['HS256'], requiredClaims: ['exp', 'sub'] }
      : { issuer: cfg.issuer, audience: cfg.audience, requiredClaims: ['exp', 'sub'] };
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, key as Uint8Array, options);
      if (typeof payload.sub !== 'string' || payload.sub === '') return null;
      // Counted from iat, and from now when iat is absent or in the future (which would lengthen it).
      const now = Math.floor(Date.now() / 1000);
      if (payload.exp! - Math.min(payload.iat ?? now, now) > MAX_LIFETIME_SECONDS) return null;
      const user: SessionUser = { sub: payload.sub };
      if (typeof payload.email === 'string') user.email = payload.email;
      if (typeof payload.name === 'string') user.name = payload.name;
      return user;
    } catch {
      return null;
    }
  };
}

/** Parses a TTL such as `90s`, `30m`, `1h`, `7d` into seconds, from 1 minute to 366 days. */
export function parseTtl(ttl: string): number {
  const m = /^(\d+)([smhd])$/.exec(ttl);
  const seconds = m ? Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[m[2] as 's' | 'm' | 'h' | 'd'] : NaN;
  if (!(seconds >= MIN_TTL_SECONDS && seconds <= MAX_LIFETIME_SECONDS)) throw new Error(`must be from 1m to 366d, a number and s, m, h or d (e.g. 1h), got '${ttl}'`);
  return seconds;
}

export async function signSessionToken(secret: string, user: SessionUser, ttlSeconds: number): Promise<string> {
  const jwt = new SignJWT({ ...(user.email ? { email: user.email } : {}), ...(user.name ? { name: user.name } : {}) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(user.sub)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds);
  return jwt.sign(new TextEncoder().encode(secret));
}
