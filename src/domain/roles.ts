// Workspace roles (README, Sessions and the Default workspace): owners and admins manage the workspace, its members and keys.
export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

/** The roles a member may be given: there is one owner, the workspace's creator. */
export const ASSIGNABLE_ROLES = ['admin', 'member'] as const satisfies readonly Role[];

export const canManage = (role: Role | null): boolean => role === 'owner' || role === 'admin';
