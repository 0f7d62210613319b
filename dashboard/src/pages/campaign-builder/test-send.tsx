// Test send: one step of the saved campaign sent now to a picked person, and what became of it.
import { useState } from 'react';
import { api, call, type Schemas } from '../../api';
import { describe } from '../../ui';
import { NODE_LABEL } from '../../enums';
import { stepName, type WorkflowNode } from '../workflow';
import { SENDS } from '../journey/graph';
import { personDataUsed, PersonPicker } from '../authoring-parts';

type Campaign = Schemas['Campaign'];

type TestResult = { node_id: string; channel: string; status: string; address: string | null; provider: string; skip_reason: string | null; error: string | null };

/** One message step, as last saved, sent now to one person (outside caps and quiet hours, tagged test). */
export function TestSend({ workspaceId, campaign }: { workspaceId: string; campaign: Campaign }) {
  const steps = (campaign.workflow_definition.nodes as WorkflowNode[]).map((n, i) => ({ n, i })).filter(({ n }) => SENDS.includes(n.type));
  const [nodeId, setNodeId] = useState(steps[0]?.n.id ?? '');
  const [person, setPerson] = useState({ id: '', byUser: false });
  const personId = person.id;
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<TestResult | null>(null);
  const [error, setError] = useState('');
  const node = steps.find((s) => s.n.id === nodeId) ?? steps[0];
  if (!node) return null;
  const send = async () => {
    setBusy(true);
    setError('');
    setResult(null);
    try {
      const r = await call(api.POST('/workspaces/{workspaceId}/campaigns/{campaignId}/test-send', { params: { path: { workspaceId, campaignId: campaign.id } }, body: { node_id: node.n.id, person_id: personId } }));
      setResult(r.data);
    } catch (e) {
      setError(describe(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="test-send">
      <h2 id="test-send">Test send</h2>
      <p className="muted">Sends one step, as last saved, to one person now: no caps or quiet hours, recorded as a test and left out of the campaign's counts.</p>
      <div className="inline">
        <div className="field">
          <label htmlFor="test-step">Step</label>
          <select id="test-step" value={node.n.id} onChange={(e) => setNodeId(e.target.value)}>
            {steps.map(({ n, i }) => <option key={n.id} value={n.id}>{stepName(n, i)}</option>)}
          </select>
        </div>
        <PersonPicker workspaceId={workspaceId} label="Send to" value={personId} onChange={(id, byUser) => setPerson({ id, byUser })} auto={!person.byUser} prefer={personDataUsed(node.n)} />
        {/* Busy, it stays focusable: focus stays on it for the result. */}
        <button type="button" disabled={!personId} aria-disabled={busy || undefined} onClick={() => void (busy || send())}>Send the test</button>
      </div>
      {error && <p className="error" role="alert">Not sent: {error}</p>}
      <div role="status">
        {result && (
          <p className={result.status === 'failed' || result.status === 'bounced' ? 'error' : 'ok'}>
            Test {NODE_LABEL[result.channel as keyof typeof NODE_LABEL] ?? result.channel}: <strong>{result.status}</strong>
            {result.address ? ` to ${result.address}` : ''} via {result.provider}
            {result.skip_reason ? ` (skipped: ${result.skip_reason.replace(/_/g, ' ')})` : ''}
            {result.error ? ` (${result.error})` : ''}.
          </p>
        )}
      </div>
    </section>
  );
}
