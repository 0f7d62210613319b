// The builder's audience section: all or any of the conditions, or a saved segment (whose
// members Herald keeps), and how many people (and who) that is now.
import type { ReactNode } from 'react';
import { api, ApiError, call } from '../../api';
import { Link } from '../../router';
import { describe, Loaded, useLoad } from '../../ui';
import { refusal } from '../../field-errors';
import { Conditions, toCondition, type Cond } from '../conditions';
import { useDebounced } from '../authoring-parts';
import { displayName } from '../People';

export function AudienceSection({ workspaceId, eventTriggered, match, setMatch, conds, setConds, segmentId, setSegmentId, fields }: {
  workspaceId: string;
  /** The campaign starts on an event: the audience says who of those performing it may enter. */
  eventTriggered: boolean;
  match: 'all' | 'any';
  setMatch: (m: 'all' | 'any') => void;
  conds: Cond[];
  setConds: (c: Cond[]) => void;
  /** A saved segment's id; null: the conditions. */
  segmentId: string | null;
  setSegmentId: (id: string | null) => void;
  fields: Record<string, string>;
}) {
  return (
    <section aria-labelledby="audience">
      <h2 id="audience">Audience</h2>
      <p className="muted">
        {eventTriggered ? 'Who of the people performing the event may enter. ' : ''}{segmentId === null ? 'No condition: everyone in the workspace.' : "The segment's members, kept as people change."}
      </p>
      <fieldset>
        <legend>Who</legend>
        <label><input type="radio" name="audience-kind" checked={segmentId === null} onChange={() => setSegmentId(null)} /> People matching conditions</label>
        <label><input type="radio" name="audience-kind" checked={segmentId !== null} onChange={() => setSegmentId('')} /> A saved segment</label>
      </fieldset>
      {segmentId === null ? <ByConditions workspaceId={workspaceId} match={match} setMatch={setMatch} conds={conds} setConds={setConds} fields={fields} /> : <BySegment workspaceId={workspaceId} segmentId={segmentId} setSegmentId={setSegmentId} fields={fields} />}
    </section>
  );
}

function BySegment({ workspaceId, segmentId, setSegmentId, fields }: { workspaceId: string; segmentId: string; setSegmentId: (id: string) => void; fields: Record<string, string> }) {
  const [load, retry] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/segments', { params: { path: { workspaceId } } })), [workspaceId]);
  const segments = load.state === 'done' ? load.data.segments : [];
  const err = fields['audience_config.segment_id'] ?? fields['audience_config'];
  return (
    <>
      <Loaded load={load} retry={retry} what="segments">
        {() =>
          segments.length === 0 ? (
            <p className="muted">No segments yet: build one on the <Link to={`/w/${workspaceId}/segments`}>Segments</Link> page.</p>
          ) : (
            <div className="field">
              <label htmlFor="audience-segment">Segment</label>
              <select id="audience-segment" value={segmentId} onChange={(e) => setSegmentId(e.target.value)} aria-invalid={err ? true : undefined}>
                {!segments.some((s) => s.id === segmentId) && <option value={segmentId}>{segmentId === '' ? 'Choose a segment' : segmentId}</option>}
                {segments.map((s) => <option key={s.id} value={s.id}>{s.name} ({s.count.toLocaleString()} {s.count === 1 ? 'member' : 'members'})</option>)}
              </select>
              {err && <small className="error">{err}</small>}
            </div>
          )
        }
      </Loaded>
      {segmentId !== '' && <AudiencePreview workspaceId={workspaceId} config={{ segment_id: segmentId }} fields={fields}>{() => null}</AudiencePreview>}
    </>
  );
}

function ByConditions({ workspaceId, match, setMatch, conds, setConds, fields }: {
  workspaceId: string;
  match: 'all' | 'any';
  setMatch: (m: 'all' | 'any') => void;
  conds: Cond[];
  setConds: (c: Cond[]) => void;
  fields: Record<string, string>;
}) {
  return (
    <>
      <div className="field">
        <label htmlFor="audience-match">People must match</label>
        <select id="audience-match" value={match} onChange={(e) => setMatch(e.target.value as 'all' | 'any')}>
          <option value="all">all of the conditions</option>
          <option value="any">any of the conditions</option>
        </select>
        {fields['audience_config.match'] && <small className="error">{fields['audience_config.match']}</small>}
      </div>
      <AudiencePreview workspaceId={workspaceId} config={conds.length > 0 ? { match, filters: conds.map(toCondition) } : {}} fields={fields}>
        {(previewFields) => <Conditions conds={conds} set={setConds} at="audience_config.filters" fields={{ ...previewFields, ...fields }} eventFields={false} label="Audience condition" />}
      </AudiencePreview>
    </>
  );
}

/**
 * How many people the audience matches and who (POST …/audiences/preview), asked again 500 ms
 * after the conditions last changed; its refusals go to the conditions they name.
 */
function AudiencePreview({ workspaceId, config, fields, children }: {
  workspaceId: string;
  config: Record<string, unknown>;
  fields: Record<string, string>;
  children: (previewFields: Record<string, string>) => ReactNode;
}) {
  const settled = useDebounced(JSON.stringify(config), 500);
  // A condition without a field is still being written: nothing to count yet.
  const incomplete = ((JSON.parse(settled) as { filters?: { field: string }[] }).filters ?? []).some((c) => !c.field);
  const [load] = useLoad(
    () =>
      incomplete
        ? Promise.resolve(null)
        : call(api.POST('/workspaces/{workspaceId}/audiences/preview', { params: { path: { workspaceId } }, body: { audience_config: JSON.parse(settled) as never } })),
    [workspaceId, settled],
  );
  const previewFields = load.state === 'failed' && load.error instanceof ApiError ? refusal(load.error).fields : {};
  const shownElsewhere = Object.keys(fields).length > 0;
  return (
    <>
      {children(previewFields)}
      <div className="summary" aria-live="polite" aria-label="Audience preview">
        {load.state === 'loading' && <p className="muted">Counting…</p>}
        {load.state === 'failed' && !shownElsewhere && <p className="error">Cannot count this audience yet: {describe(load.error)}</p>}
        {load.state === 'done' && load.data === null && <p className="muted">Give each condition a field to count who matches.</p>}
        {load.state === 'done' && load.data !== null && (
          <>
            <p><strong>{load.data.count_capped ? `More than ${load.data.count.toLocaleString()}` : load.data.count.toLocaleString()}</strong> {load.data.count === 1 ? 'person matches' : 'people match'} now.</p>
            {load.data.sample.length > 0 && (
              <p>
                For example:{' '}
                {load.data.sample.map((p, i) => (
                  <span key={p.id}>{i > 0 && ', '}<Link to={`/w/${workspaceId}/people/${p.id}`}>{displayName(p)}</Link></span>
                ))}
              </p>
            )}
          </>
        )}
      </div>
    </>
  );
}
