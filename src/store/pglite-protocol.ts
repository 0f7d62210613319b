// Messages between a thread's PGlite client and the store thread that owns PGlite.
export type StoreRequest =
  | { id: number; op: 'query'; sql: string; params?: unknown[]; tx?: number }
  | { id: number; op: 'exec'; sql: string; tx?: number }
  | { id: number; op: 'begin' }
  | { id: number; op: 'end'; tx: number; commit: boolean };

export type StoreReply =
  | { id: number; ok: true; rows: unknown[]; rowCount: number; tx?: number }
  | { id: number; ok: false; message: string; code?: string };
