// Workspace roles (DECISIONS §2): owners and admins manage the workspace, its members and keys.
export type Role = 'owner' | 'admin' | 'member';

export const canManage = (role: Role | null): boolean => role === 'owner' || role === 'admin';
