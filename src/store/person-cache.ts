// external_id → person id, per actor. Only the actor owning a workspace writes its people's
// identities (create, delete, merge), so it can keep this cache exact by forgetting on delete.
// A lookup that started before a forget must not put the forgotten id back: fills carry the
// generation at which their lookup began and are dropped when a forget came later.
import { LRUCache } from 'lru-cache';

const ids = new LRUCache<string, string>({ max: 100_000 });
const forgottenAt = new LRUCache<string, number>({ max: 100_000 });
let generation = 0;
const key = (workspaceId: string, externalId: string) => workspaceId + '\0' + externalId;

export const personIds = {
  get: (workspaceId: string, externalId: string) => ids.get(key(workspaceId, externalId)),
  /** Call before looking the person up in the store; pass the result to fill(). */
  begin: () => generation,
  fill(workspaceId: string, externalId: string, id: string, begun: number): void {
    const k = key(workspaceId, externalId);
    if ((forgottenAt.get(k) ?? -1) < begun) ids.set(k, id);
  },
  forget(workspaceId: string, externalId: string): void {
    const k = key(workspaceId, externalId);
    ids.delete(k);
    forgottenAt.set(k, ++generation);
  },
};
