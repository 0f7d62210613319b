// Segments (docs/audiences.md): saved condition trees whose members Herald keeps. The list shows
// each one's live count and its computation; a segment's page edits its name and conditions
// (computed again in the background: the page asks every second until it is ready), shows its
// count and first members, and deletes it (refused while a live campaign targets it).
import { useEffect, useState, type FormEvent } from 'react';
import { api, call } from '../api';
import type { paths } from '../generated/openapi';
import { Link, navigate } from '../router';
import { Actions, Empty, Field, Loaded, TableBox, useLoad, useSubmit, when } from '../ui';
import { emptyGroup, fromTree, GroupEditor, toTree, type Group } from './segment-tree';

type Segment = paths['/workspaces/{workspaceId}/segments/{segmentId}']['get']['responses'][200]['content']['application/json']['data']['segment'];
const SAMPLE = 10;

/** Asks again every second while `computing` (a computation's progress, then its count). */
function usePollWhile(computing: boolean, again: () => void) {
  useEffect(() => {
    if (!computing) return;
    const t = setInterval(again, 1000);
    return () => clearInterval(t);
  }, [computing, again]);
}

function State({ s }: { s: Segment }) {
  if (s.status !== 'computing') return <span className={`badge ${s.status}`}>{s.status}{s.error ? `: ${s.error}` : ''}</span>;
  const { walked, total } = s.progress;
  return (
    <>
      <span className="badge computing">computing</span>{' '}
      <progress aria-label={`${s.name}: computed`} max={Math.max(total, 1)} value={walked} /> {walked.toLocaleString()} of {total.toLocaleString()} people
    </>
  );
}

function useLists(workspaceId: string) {
  const [lists] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/lists', { params: { path: { workspaceId } } })), [workspaceId]);
  return lists.state === 'done' ? lists.data.lists : [];
}

export function Segments({ workspaceId }: { workspaceId: string }) {
  const [load, retry] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/segments', { params: { path: { workspaceId } } })), [workspaceId]);
  usePollWhile(load.state === 'done' && load.data.segments.some((s) => s.status === 'computing'), retry);
  return (
    <>
      <p><Link to={`/w/${workspaceId}/people`}>← People</Link></p>
      <h1 tabIndex={-1}>Segments</h1>
      <Loaded load={load} retry={retry} what="segments">
        {(r) =>
          r.segments.length === 0 ? (
            <Empty title="No segments yet.">
              <p>A segment keeps the people matching its conditions; a campaign can target it.</p>
            </Empty>
          ) : (
            <TableBox label="Segments">
              <table>
                <caption className="sr-only">Segments</caption>
                <thead>
                  <tr><th scope="col">Name</th><th scope="col">Members</th><th scope="col">Status</th><th scope="col">Updated</th></tr>
                </thead>
                <tbody>
                  {r.segments.map((s) => (
                    <tr key={s.id}>
                      <td><Link to={`/w/${workspaceId}/segments/${s.id}`}>{s.name}</Link></td>
                      <td>{s.count.toLocaleString()}</td>
                      <td><State s={s} /></td>
                      <td>{when(s.updated_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableBox>
          )
        }
      </Loaded>
      <NewSegment workspaceId={workspaceId} />
    </>
  );
}

function NewSegment({ workspaceId }: { workspaceId: string }) {
  const [name, setName] = useState('');
  const [group, setGroup] = useState<Group>(emptyGroup);
  const lists = useLists(workspaceId);
  const { busy, done, error, fields, submit } = useSubmit();
  const create = (e: FormEvent) => {
    e.preventDefault();
    void submit(async () => {
      // `conditions` is a free object, which the generated types cannot say.
      const r = await call(api.POST('/workspaces/{workspaceId}/segments', { params: { path: { workspaceId } }, body: { name: name.trim(), conditions: toTree(group) as never } }));
      navigate(`/w/${workspaceId}/segments/${r.data.segment.id}`);
    });
  };
  return (
    <section aria-labelledby="new-segment">
      <h2 id="new-segment">New segment</h2>
      <form onSubmit={create}>
        <Field label="Segment name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} error={fields.name} />
        <GroupEditor group={group} set={setGroup} at="conditions" name="Segment" fields={fields} lists={lists} />
        <Actions done={done} error={error}>
          <button type="submit" aria-disabled={busy || undefined}>{busy ? 'Creating…' : 'Create segment'}</button>
        </Actions>
      </form>
    </section>
  );
}

export function SegmentPage({ workspaceId, segmentId }: { workspaceId: string; segmentId: string }) {
  const path = { workspaceId, segmentId };
  const [load, retry] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/segments/{segmentId}', { params: { path } })), [workspaceId, segmentId]);
  const segment = load.state === 'done' ? load.data.data.segment : null;
  usePollWhile(segment?.status === 'computing', retry);
  return (
    <>
      <p><Link to={`/w/${workspaceId}/segments`}>← Segments</Link></p>
      <h1 tabIndex={-1}>{segment ? segment.name : 'Segment'}</h1>
      <Loaded load={load} retry={retry} what="this segment">
        {(r) => (
          <>
            <p aria-live="polite">
              <strong>{r.data.segment.count.toLocaleString()}</strong> {r.data.segment.count === 1 ? 'member' : 'members'} · <State s={r.data.segment} />
              {r.data.segment.computed_at && <> · computed {when(r.data.segment.computed_at)}</>}
            </p>
            <Members workspaceId={workspaceId} segment={r.data.segment} />
            <Edit workspaceId={workspaceId} segment={r.data.segment} onSaved={retry} />
            <Delete workspaceId={workspaceId} segment={r.data.segment} />
          </>
        )}
      </Loaded>
    </>
  );
}

/** The first members, asked again when the count or the computation changes. */
function Members({ workspaceId, segment }: { workspaceId: string; segment: Segment }) {
  const [load, retry] = useLoad(
    () => call(api.GET('/workspaces/{workspaceId}/segments/{segmentId}/people', { params: { path: { workspaceId, segmentId: segment.id }, query: { limit: SAMPLE } } })),
    [workspaceId, segment.id, segment.count, segment.status],
  );
  return (
    <section aria-labelledby="members">
      <h2 id="members">Members</h2>
      <Loaded load={load} retry={retry} what="the members">
        {(r) =>
          r.people.length === 0 ? (
            <p className="muted">{segment.status === 'computing' ? 'Computing: members appear as they are found.' : 'Nobody matches now.'}</p>
          ) : (
            <ul aria-label="Segment members">
              {r.people.map((p) => <li key={p.id}><Link to={`/w/${workspaceId}/people/${p.id}`}>{p.external_id}</Link>{p.email && ` (${p.email})`} · since {when(p.entered_at)}</li>)}
              {r.next && <li className="muted">and more</li>}
            </ul>
          )
        }
      </Loaded>
    </section>
  );
}

function Edit({ workspaceId, segment, onSaved }: { workspaceId: string; segment: Segment; onSaved: () => void }) {
  const [name, setName] = useState(segment.name);
  const [group, setGroup] = useState<Group>(() => fromTree(segment.conditions));
  const lists = useLists(workspaceId);
  const { busy, done, error, fields, submit } = useSubmit();
  const save = (e: FormEvent) => {
    e.preventDefault();
    void submit(async () => {
      // `conditions` is a free object, which the generated types cannot say.
      const conditions = toTree(group) as never;
      const changed = JSON.stringify(conditions) !== JSON.stringify(segment.conditions);
      await call(api.PUT('/workspaces/{workspaceId}/segments/{segmentId}', { params: { path: { workspaceId, segmentId: segment.id } }, body: { name: name.trim(), ...(changed ? { conditions } : {}) } }));
      onSaved();
      return changed ? 'Saved: its members are being computed again.' : 'Saved.';
    });
  };
  return (
    <section aria-labelledby="conditions">
      <h2 id="conditions">Conditions</h2>
      <form onSubmit={save}>
        <Field label="Segment name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} error={fields.name} />
        <GroupEditor group={group} set={setGroup} at="conditions" name="Segment" fields={fields} lists={lists} />
        <Actions done={done} error={error}>
          <button type="submit" aria-disabled={busy || undefined}>{busy ? 'Saving…' : 'Save segment'}</button>
        </Actions>
      </form>
    </section>
  );
}

/** Delete; refused (SEGMENT_IN_USE) while a live campaign targets it, said beside the button. */
function Delete({ workspaceId, segment }: { workspaceId: string; segment: Segment }) {
  const { busy, done, error, submit } = useSubmit();
  const remove = () =>
    void submit(async () => {
      if (!confirm(`Delete the segment ${segment.name}? Its people stay.`)) return;
      await call(api.DELETE('/workspaces/{workspaceId}/segments/{segmentId}', { params: { path: { workspaceId, segmentId: segment.id } } }));
      navigate(`/w/${workspaceId}/segments`);
    });
  return (
    <section aria-labelledby="delete-segment">
      <h2 id="delete-segment">Delete</h2>
      <Actions done={done} error={error}>
        <button type="button" className="danger" onClick={remove} aria-disabled={busy || undefined}>Delete segment</button>
      </Actions>
    </section>
  );
}
