// The workspace switcher (in the header), the workspaces page (list and creation), and the
// home address, which opens the last workspace used.
import { useEffect, useState, type FormEvent } from 'react';
import { api, call } from '../api';
import { Link, navigate, Redirect } from '../router';
import { Actions, Empty, Field, Loaded, TableBox, useSubmit, when } from '../ui';
import { lastWorkspace, refreshWorkspaces, rememberWorkspace, useWorkspaces } from '../workspaces';

/** The switcher's entry for the workspaces page. */
const ALL = 'all';

export function WorkspaceSwitcher({ current }: { current: string | undefined }) {
  const [load] = useWorkspaces();
  useEffect(() => {
    if (current) rememberWorkspace(current);
  }, [current]);
  if (load.state !== 'done') return null;
  return (
    <div className="switcher">
      <label htmlFor="workspace-switcher">Workspace</label>
      <select
        id="workspace-switcher"
        value={current ?? ''}
        onChange={(e) => navigate(e.target.value === ALL ? '/workspaces' : `/w/${e.target.value}/people`)}
      >
        {!current && <option value="" disabled>Choose…</option>}
        {load.data.map((w) => (
          <option key={w.id} value={w.id}>{w.name}</option>
        ))}
        <option value={ALL}>All workspaces…</option>
      </select>
    </div>
  );
}

export function Home() {
  const [load, retry] = useWorkspaces();
  return (
    <Loaded load={load} retry={retry} what="your workspaces">
      {(list) => {
        const last = list.find((w) => w.id === lastWorkspace()) ?? list[0];
        return <Redirect to={last ? `/w/${last.id}/people` : '/workspaces'} />;
      }}
    </Loaded>
  );
}

export function Workspaces() {
  const [load, retry] = useWorkspaces();
  return (
    <>
      <h1 tabIndex={-1}>Workspaces</h1>
      <Loaded load={load} retry={retry} what="your workspaces">
        {(list) =>
          list.length === 0 ? (
            <Empty title="You are not a member of any workspace yet.">
              <p>Create one below; you will be its owner. To join an existing one, ask its owner to add you.</p>
            </Empty>
          ) : (
            <TableBox label="Your workspaces">
              <table>
                <caption className="sr-only">Your workspaces</caption>
                <thead>
                  <tr><th scope="col">Name</th><th scope="col">ID</th><th scope="col">Created</th></tr>
                </thead>
                <tbody>
                  {list.map((w) => (
                    <tr key={w.id}>
                      <td><Link to={`/w/${w.id}/people`}>{w.name}</Link></td>
                      <td><code>{w.id}</code></td>
                      <td>{when(w.created_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableBox>
          )
        }
      </Loaded>
      <CreateWorkspace />
    </>
  );
}

function CreateWorkspace() {
  const [name, setName] = useState('');
  const { busy, error, fields, submit } = useSubmit();
  const create = (e: FormEvent) => {
    e.preventDefault();
    void submit(async () => {
      const r = await call(api.POST('/workspaces', { body: { name } }));
      refreshWorkspaces();
      navigate(`/w/${r.data.workspace.id}/people`);
    });
  };
  return (
    <section aria-labelledby="create-ws">
      <h2 id="create-ws">Create a workspace</h2>
      <form onSubmit={create} className="inline">
        <Field label="Name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} error={fields.name} />
        <Actions done="" error={error}>
          <button type="submit" aria-disabled={busy || undefined}>{busy ? 'Creating…' : 'Create workspace'}</button>
        </Actions>
      </form>
    </section>
  );
}
