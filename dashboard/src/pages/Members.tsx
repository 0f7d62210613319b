// Members: who may use this workspace, with their roles; owners and admins add people by their
// user id (the `sub` of their session token or ID token), change a role and remove a member.
// Herald answers a change by anyone else with the reason, shown above the list.
import { useState, type FormEvent } from 'react';
import { api, call, type Schemas } from '../api';
import { Actions, Empty, Field, Loaded, TableBox, describe, useLoad, useSubmit, when } from '../ui';
import { ROLES, type Role } from '../enums';

type Member = Schemas['Member'];

export function Members({ workspaceId }: { workspaceId: string }) {
  const [load, retry] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/members', { params: { path: { workspaceId } } })), [workspaceId]);
  const [rowError, setRowError] = useState('');

  const put = (user_id: string, role: Role) => call(api.POST('/workspaces/{workspaceId}/members', { params: { path: { workspaceId } }, body: { user_id, role } }));
  const changeRole = async (m: Member, role: Role) => {
    setRowError('');
    try {
      await put(m.user_id, role);
    } catch (e) {
      setRowError(`Could not change the role of ${m.user_id}: ${describe(e)}`);
    }
    retry();
  };
  const remove = async (m: Member) => {
    if (!confirm(`Remove ${m.user_id} from this workspace? They lose access at once.`)) return;
    setRowError('');
    try {
      await call(api.DELETE('/workspaces/{workspaceId}/members/{userId}', { params: { path: { workspaceId, userId: m.user_id } } }));
    } catch (e) {
      setRowError(`Could not remove ${m.user_id}: ${describe(e)}`);
    }
    retry();
  };

  return (
    <>
      <h1 tabIndex={-1}>Members</h1>
      <Actions done="" error={rowError} />
      <Loaded load={load} retry={retry} what="members">
        {(r) => (
          <>
            {r.members.length <= 1 && (
              <Empty title="Only the owner so far.">
                <p>Add a teammate below by their user id: the <code>sub</code> of their session token (with OIDC, their identity provider's user id).</p>
              </Empty>
            )}
            <TableBox label="Members">
              <table>
                <caption className="sr-only">Members</caption>
                <thead>
                  <tr><th scope="col">User</th><th scope="col">Role</th><th scope="col">Since</th><th scope="col">Actions</th></tr>
                </thead>
                <tbody>
                  {r.members.map((m) => (
                    <tr key={m.user_id}>
                      <td><code>{m.user_id}</code></td>
                      <td>
                        {m.role === 'owner' ? (
                          'owner'
                        ) : (
                          <>
                            <label htmlFor={`role-${m.user_id}`} className="sr-only">Role of {m.user_id}</label>
                            <select id={`role-${m.user_id}`} value={m.role} onChange={(e) => void changeRole(m, e.target.value as Role)}>
                              {ROLES.map((role) => <option key={role} value={role}>{role}</option>)}
                            </select>
                          </>
                        )}
                      </td>
                      <td>{when(m.created_at)}</td>
                      <td className="actions">
                        {m.role !== 'owner' && (
                          <button type="button" className="danger" onClick={() => void remove(m)}>Remove<span className="sr-only"> {m.user_id}</span></button>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableBox>
          </>
        )}
      </Loaded>
      <AddMember put={put} onAdded={retry} />
    </>
  );
}

function AddMember({ put, onAdded }: { put: (userId: string, role: Role) => Promise<unknown>; onAdded: () => void }) {
  const [userId, setUserId] = useState('');
  const [role, setRole] = useState<Role>('member');
  const { busy, done, error, fields, submit } = useSubmit();
  const add = (e: FormEvent) => {
    e.preventDefault();
    void submit(async () => {
      await put(userId.trim(), role);
      setUserId('');
      onAdded();
      return `${userId.trim()} added as ${role === 'admin' ? 'an admin' : 'a member'}.`;
    });
  };
  return (
    <section aria-labelledby="add-member">
      <h2 id="add-member">Add a member</h2>
      <form onSubmit={add}>
        <Field label="User id" value={userId} onChange={(e) => setUserId(e.target.value)} required maxLength={255} spellCheck={false} error={fields.user_id} hint="The sub claim of their token" />
        <fieldset>
          <legend>Role</legend>
          <label><input type="radio" name="role" checked={role === 'member'} onChange={() => setRole('member')} /> Member (uses the workspace)</label>
          <label><input type="radio" name="role" checked={role === 'admin'} onChange={() => setRole('admin')} /> Admin (also manages members and keys)</label>
        </fieldset>
        <Actions done={done} error={error}>
          <button type="submit" aria-disabled={busy || undefined}>{busy ? 'Adding…' : 'Add member'}</button>
        </Actions>
      </form>
    </section>
  );
}
