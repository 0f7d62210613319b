// Lists (docs/audiences.md): the workspace's lists, one list's CSV upload (a progress bar while the
// file goes up, then its rows as the import reads them), its import history with each import's
// row errors, and its members a page at a time.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api, call } from '../api';
import { token } from '../session';
import { Link, navigate } from '../router';
import { Actions, Empty, Field, Loaded, TableBox, describe, useLoad, useSubmit, when } from '../ui';

export function Lists({ workspaceId }: { workspaceId: string }) {
  const [load, retry] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/lists', { params: { path: { workspaceId } } })), [workspaceId]);
  const [name, setName] = useState('');
  const { busy, done, error, fields, submit } = useSubmit();
  const create = (e: FormEvent) => {
    e.preventDefault();
    void submit(async () => {
      const r = await call(api.POST('/workspaces/{workspaceId}/lists', { params: { path: { workspaceId } }, body: { name: name.trim() } }));
      navigate(`/w/${workspaceId}/lists/${r.data.list.id}`);
    });
  };
  return (
    <>
      <h1 tabIndex={-1}>Lists</h1>
      {/* Linked from here rather than the header, which holds one row at 1280 px. */}
      <p>What people may choose to receive, and their preference page: <Link to={`/w/${workspaceId}/topics`}>Topics</Link>. People kept by their conditions: <Link to={`/w/${workspaceId}/segments`}>Segments</Link>.</p>
      <Loaded load={load} retry={retry} what="lists">
        {(r) =>
          r.lists.length === 0 ? (
            <Empty title="No lists yet.">
              <p>Create one below, then import its people from a CSV file.</p>
            </Empty>
          ) : (
            <TableBox label="Lists">
              <table>
                <caption className="sr-only">Lists</caption>
                <thead>
                  <tr><th scope="col">Name</th><th scope="col">Members</th><th scope="col">Created</th></tr>
                </thead>
                <tbody>
                  {r.lists.map((l) => (
                    <tr key={l.id}>
                      <td><Link to={`/w/${workspaceId}/lists/${l.id}`}>{l.name}</Link></td>
                      <td>{l.members.toLocaleString()}</td>
                      <td>{when(l.created_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableBox>
          )
        }
      </Loaded>
      <section aria-labelledby="new-list">
        <h2 id="new-list">New list</h2>
        <form onSubmit={create}>
          <Field label="List name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} error={fields.name} />
          <Actions done={done} error={error}>
            <button type="submit" aria-disabled={busy || undefined}>{busy ? 'Creating…' : 'Create list'}</button>
          </Actions>
        </form>
      </section>
    </>
  );
}

/** Sends the file with XMLHttpRequest: fetch reports no upload progress. */
function upload(workspaceId: string, listId: string, file: File, progress: (sent: number) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/api/v1/workspaces/${workspaceId}/lists/${listId}/import`);
    xhr.setRequestHeader('Content-Type', 'text/csv');
    xhr.setRequestHeader('Authorization', `Bearer ${token() ?? ''}`);
    xhr.upload.onprogress = (e) => progress(e.lengthComputable ? e.loaded / e.total : 0);
    xhr.onload = () => {
      const body = JSON.parse(xhr.responseText || '{}') as { import_id?: string; error?: { message?: string } };
      if (xhr.status === 202 && body.import_id) resolve(body.import_id);
      else reject(new Error(body.error?.message ?? `Herald answered ${xhr.status}`));
    };
    xhr.onerror = () => reject(new Error('The upload failed (network)'));
    xhr.send(file);
  });
}

export function List({ workspaceId, listId }: { workspaceId: string; listId: string }) {
  const [load, retry] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/lists/{listId}', { params: { path: { workspaceId, listId } } })), [workspaceId, listId]);
  const [imports, retryImports] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/lists/{listId}/imports', { params: { path: { workspaceId, listId } } })), [workspaceId, listId]);
  const [file, setFile] = useState<File | null>(null);
  const [sent, setSent] = useState<number | null>(null);
  const { busy, done, error, submit } = useSubmit();
  const running = imports.state === 'done' && imports.data.imports.some((i) => i.status === 'waiting' || i.status === 'running');
  // While an import runs, its progress is read every second.
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => {
      retryImports();
      retry();
    }, 1000);
    return () => clearInterval(timer);
  }, [running, retry, retryImports]);
  // Once more imports have ended than when last read, the list once more: its member count may
  // have been read before an import's last page (or the import ended before any tick saw it run).
  const ended = imports.state === 'done' ? imports.data.imports.filter((i) => i.status !== 'waiting' && i.status !== 'running').map((i) => i.id).join() : null;
  const endedBefore = useRef<string | null>(null);
  useEffect(() => {
    if (ended === null) return;
    if (endedBefore.current !== null && ended !== endedBefore.current) retry();
    endedBefore.current = ended;
  }, [ended, retry]);
  const start = (e: FormEvent) => {
    e.preventDefault();
    if (!file) return;
    void submit(async () => {
      setSent(0);
      try {
        await upload(workspaceId, listId, file, setSent);
      } finally {
        setSent(null);
      }
      retryImports();
      return `${file.name} uploaded: its rows are being imported.`;
    });
  };
  const remove = () =>
    void submit(async () => {
      if (!confirm('Delete this list? Its people stay.')) return;
      await call(api.DELETE('/workspaces/{workspaceId}/lists/{listId}', { params: { path: { workspaceId, listId } } }));
      navigate(`/w/${workspaceId}/lists`);
    });
  return (
    <>
      <p><Link to={`/w/${workspaceId}/lists`}>← Lists</Link></p>
      <h1 tabIndex={-1}>{load.state === 'done' ? load.data.data.list.name : 'List'}</h1>
      <Loaded load={load} retry={retry} what="this list">
        {(r) => <p>{r.data.list.members.toLocaleString()} members</p>}
      </Loaded>
      <section aria-labelledby="import">
        <h2 id="import">Import a CSV</h2>
        <p className="muted">A header row naming <code>external_id</code> or <code>email</code>; every other column becomes a trait.</p>
        <form onSubmit={start}>
          <div className="field">
            <label htmlFor="csv-file">CSV file</label>
            <input id="csv-file" type="file" accept=".csv,text/csv" onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
          </div>
          {sent !== null && <progress aria-label="Upload" max={1} value={sent} />}
          <Actions done={done} error={error}>
            <button type="submit" aria-disabled={busy || !file || undefined}>{busy ? 'Uploading…' : 'Import'}</button>
          </Actions>
        </form>
      </section>
      <section aria-labelledby="history">
        <h2 id="history">Imports</h2>
        <Loaded load={imports} retry={retryImports} what="the imports">
          {(r) =>
            r.imports.length === 0 ? (
              <p className="muted">No imports yet.</p>
            ) : (
              <TableBox label="Imports">
                <table>
                  <caption className="sr-only">Imports, newest first</caption>
                  <thead>
                    <tr><th scope="col">Started</th><th scope="col">Status</th><th scope="col">Rows read</th><th scope="col">Added</th><th scope="col">Failed</th><th scope="col">Errors</th></tr>
                  </thead>
                  <tbody>
                    {r.imports.map((i) => (
                      <tr key={i.id}>
                        <td>{when(i.created_at)}</td>
                        <td>{i.status}{i.status === 'running' || i.status === 'waiting' ? <progress aria-label="Import under way" /> : null}</td>
                        <td>{i.rows_read.toLocaleString()}</td>
                        <td>{i.rows_added.toLocaleString()}</td>
                        <td>{i.rows_failed.toLocaleString()}</td>
                        <td>
                          {i.error && <p className="error">{i.error}</p>}
                          {i.errors.length > 0 && (
                            <details>
                              <summary>{i.errors.length} row errors</summary>
                              <ul>{i.errors.map((e) => <li key={e.row}>Row {e.row}: {e.error}</li>)}</ul>
                            </details>
                          )}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableBox>
            )
          }
        </Loaded>
      </section>
      <Members workspaceId={workspaceId} listId={listId} count={load.state === 'done' ? load.data.data.list.members : 0} />
      <p><button type="button" className="danger" onClick={remove}>Delete list</button></p>
    </>
  );
}

/** `count`: the list's member count as last read; the page is read again when it changes (an import ran). */
function Members({ workspaceId, listId, count }: { workspaceId: string; listId: string; count: number }) {
  const [after, setAfter] = useState<string[]>([]);
  const cursor = after.at(-1);
  const [load, retry] = useLoad(
    () => call(api.GET('/workspaces/{workspaceId}/lists/{listId}/people', { params: { path: { workspaceId, listId }, query: { limit: 50, ...(cursor ? { after: cursor } : {}) } } })),
    [workspaceId, listId, cursor, count],
  );
  return (
    <section aria-labelledby="members">
      <h2 id="members">Members</h2>
      <Loaded load={load} retry={retry} what="the members">
        {(r) => (
          <>
            {r.people.length === 0 ? (
              <p className="muted">No members yet.</p>
            ) : (
              <TableBox label="Members">
                <table>
                  <caption className="sr-only">Members</caption>
                  <thead>
                    <tr><th scope="col">Person</th><th scope="col">Email</th><th scope="col">Added</th></tr>
                  </thead>
                  <tbody>
                    {r.people.map((p) => (
                      <tr key={p.id}>
                        <td><Link to={`/w/${workspaceId}/people/${p.id}`}>{p.external_id}</Link></td>
                        <td>{p.email ?? '—'}</td>
                        <td>{when(p.added_at)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableBox>
            )}
            <p>
              {after.length > 0 && <button type="button" onClick={() => setAfter(after.slice(0, -1))}>Previous</button>}{' '}
              {r.next && <button type="button" onClick={() => setAfter([...after, r.next!])}>Next</button>}
            </p>
          </>
        )}
      </Loaded>
      {load.state === 'failed' && <p className="error">{describe(load.error)}</p>}
    </section>
  );
}
