// Who a request acts for, as the front establishes it, the actor protocol carries it and the
// handlers read it: an API key (of a workspace, with permissions) or a signed-in user. Here,
// below all of them, so none takes the type from a floor above its own.

/** A key's kind (README, Permissions): `sk_` keys are secret, `pk_` keys public. */
export const KEY_TYPES = ['secret', 'public'] as const;
export type KeyType = (typeof KEY_TYPES)[number];

/** A key's environment (README, Request bodies). */
export const KEY_ENVIRONMENTS = ['live', 'test'] as const;
export type KeyEnvironment = (typeof KEY_ENVIRONMENTS)[number];

export interface KeyPrincipal {
  kind: 'key';
  keyId: string;
  workspaceId: string;
  permissions: string[];
}

/** A dashboard session's user: `sub` names them. */
export interface SessionUser {
  sub: string;
  email?: string;
  name?: string;
}

export interface SessionPrincipal {
  kind: 'session';
  user: SessionUser;
}

/** No credential: an unsubscribe link or a provider callback (the handler verifies what the request carries). */
export interface NoPrincipal {
  kind: 'none';
}
