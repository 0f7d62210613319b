// A webhook trigger: the curl that triggers the saved campaign, for a chosen API key and
// Idempotency-Key, with a copy button.
import { useState } from 'react';
import { api, call, type Schemas } from '../../api';
import { Link } from '../../router';
import { Field, useLoad } from '../../ui';
import { LIVE } from '../Campaigns';

export function WebhookTrigger({ workspaceId, campaign }: { workspaceId: string; campaign: Schemas['Campaign'] | null }) {
  const [keys] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/api-keys', { params: { path: { workspaceId } } })), [workspaceId]);
  const [keyId, setKeyId] = useState('');
  const [idem, setIdem] = useState<string>(() => crypto.randomUUID());
  const [copied, setCopied] = useState('');
  if (!campaign) return <p className="muted">Save the campaign to get its trigger URL and the curl that calls it.</p>;
  const usable = keys.state === 'done' ? keys.data.api_keys.filter((k) => k.key_type === 'secret' && (k.permissions.includes('campaigns:trigger') || k.permissions.includes('*'))) : [];
  const key = usable.find((k) => k.id === keyId) ?? usable[0];
  const url = `${location.origin}/api/v1/campaigns/${campaign.id}/trigger`;
  const curl = [
    `curl -X POST '${url}'`,
    `  -H 'Authorization: Bearer ${key ? `${key.key_prefix}…` : '<secret API key with campaigns:trigger>'}'`,
    `  -H 'Content-Type: application/json'`,
    ...(idem.trim() ? [`  -H 'Idempotency-Key: ${idem.trim()}'`] : []),
    `  -d '{"workspace_id":"${workspaceId}","trigger_data":{}}'`,
  ].join(' \\\n');
  return (
    <>
      <p>Your server triggers this campaign for its whole audience with a call like this one (the key's full secret was shown once when it was created; the curl shows its prefix). <code>trigger_data</code> is the Liquid scope <code>trigger</code>.</p>
      <div className="inline">
        <div className="field">
          <label htmlFor="webhook-key">API key</label>
          <select id="webhook-key" value={key?.id ?? ''} onChange={(e) => setKeyId(e.target.value)}>
            {usable.length === 0 && <option value="">No secret key with campaigns:trigger</option>}
            {usable.map((k) => <option key={k.id} value={k.id}>{k.name} ({k.key_prefix}…)</option>)}
          </select>
        </div>
        <Field label="Idempotency-Key" value={idem} onChange={(e) => setIdem(e.target.value)} maxLength={255}
          hint="A repeat with the same key within 24 hours sends nothing again" />
      </div>
      {keys.state === 'done' && usable.length === 0 && (
        <p className="notice">No secret API key can trigger campaigns: <Link to={`/w/${workspaceId}/keys`}>create one</Link> with the <code>campaigns:trigger</code> permission.</p>
      )}
      <pre role="region" aria-label="The curl that triggers this campaign" tabIndex={0}>{curl}</pre>
      <button type="button" onClick={() => void navigator.clipboard.writeText(curl).then(() => setCopied('Copied.'), () => setCopied('Could not copy: select the text instead.'))}>Copy the curl</button>{' '}
      <span role="status" className="ok">{copied}</span>
      {!LIVE.includes(campaign.status) && <p className="muted">The call is refused until the campaign is active.</p>}
    </>
  );
}
