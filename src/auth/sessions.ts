// Dashboard session tokens: JWTs verified with jose, HS256 with a shared secret or OIDC
// through a JWKS URL (DECISIONS §2). The user is `sub`; `exp` is required.
import { SignJWT, createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { SessionUser } from '../domain/principals.js';


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
      const user: SessionUser = { sub: payload.sub };
      if (typeof payload.email === 'string') user.email = payload.email;
      if (typeof payload.name === 'string') user.name = payload.name;
      return user;
    } catch {
      return null;
    }
  };
}

/** Parses a TTL such as `90s`, `30m`, `1h`, `7d` into seconds. */
export function parseTtl(ttl: string): number {
  const m = /^(\d+)([smhd])$/.exec(ttl);
  if (!m) throw new Error(`invalid TTL '${ttl}': use a number followed by s, m, h or d (e.g. 1h)`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[m[2] as 's' | 'm' | 'h' | 'd'];
}

export async function signSessionToken(secret: string, user: SessionUser, ttlSeconds: number): Promise<string> {
  const jwt = new SignJWT({ ...(user.email ? { email: user.email } : {}), ...(user.name ? { name: user.name } : {}) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(user.sub)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds);
  return jwt.sign(new TextEncoder().encode(secret));
}
