// A running campaign's progress: its totals and counters by channel, and its latest messages,
// polled while it can still send.
import { useCallback, useEffect } from 'react';
import { api, call, type Schemas } from '../../api';
import { Loaded, percent, TableBox, useLoad, usePageBack, when } from '../../ui';
import { CHANNEL_COUNTERS, MESSAGE_CHANNEL_LABEL, MESSAGE_CHANNELS } from '../../enums';
import { inWorkspace } from '../Campaigns';
import { MessageTable } from '../message-table';
import type { NodeStats } from '../journey/graph';

type Campaign = Schemas['Campaign'];

/** Messages a page of the progress's list. */
const MESSAGES = 20;
/** Where the next page of messages starts: the last one shown. */
const lastShown = (ms: { message_id: string; created_at: string }[]) => {
  const m = ms.at(-1);
  return m && { id: m.message_id, created_at: m.created_at };
};

/**
 * The campaign's counters, by channel, asked again every 2 s while it can still send; each
 * answer's status and journey counts handed up (the canvas draws them on its nodes).
 */
export function Progress({ workspaceId, campaign, onStatus, onNodes }: { workspaceId: string; campaign: Campaign; onStatus: (c: Campaign) => void; onNodes: (n: NodeStats | undefined) => void }) {
  const [load, reload] = useLoad(
    () => call(api.GET('/campaigns/{campaignId}', { params: { ...inWorkspace(workspaceId), path: { campaignId: campaign.id } } })),
    [workspaceId, campaign.id],
  );
  // Each person's messages, newest first (GET …/campaigns/{id}/messages), polled with the
  // counters; paged back by the last one shown (an older page is asked again too: its statuses move).
  const pages = usePageBack();
  const [messages, reloadMessages] = useLoad(
    () => call(api.GET('/workspaces/{workspaceId}/campaigns/{campaignId}/messages', { params: { path: { workspaceId, campaignId: campaign.id }, query: { limit: MESSAGES, ...pages.query } } })),
    [workspaceId, campaign.id, pages.query],
  );
  const again = useCallback(() => {
    reload();
    reloadMessages();
  }, [reload, reloadMessages]);
  const status = load.state === 'done' ? load.data.data.campaign.status : campaign.status;
  const polling = status !== 'archived' && status !== 'failed';
  useEffect(() => {
    if (!polling) return;
    const timer = setInterval(again, 2000);
    return () => clearInterval(timer);
  }, [again, polling]);
  useEffect(() => {
    if (load.state !== 'done') return;
    onStatus(load.data.data.campaign);
    onNodes(load.data.data.nodes);
  }, [load]);
  return (
    <section aria-labelledby="progress">
      <h2 id="progress">Progress</h2>
      <Loaded load={load} retry={again} what="the campaign's progress">
        {({ data: { stats } }) => (
          <>
            <ul className="stats" aria-label="Campaign totals">
              <li><strong>{stats.enrolled}</strong> enrolled</li>
              <li><strong>{stats.triggered}</strong> runs</li>
              <li><strong>{stats.sent}</strong> sent</li>
              <li><strong>{stats.delivered}</strong> delivered</li>
              <li><strong>{stats.failed}</strong> failed</li>
              {stats.converted !== undefined && <li><strong>{stats.converted}</strong> converted ({percent(stats.converted, stats.enrolled)} of enrolled)</li>}
              <li>last triggered {when(stats.last_triggered_at)}</li>
            </ul>
            <TableBox label="Messages by channel">
              <table>
                <caption className="sr-only">Messages by channel{polling ? ', updated every 2 seconds' : ''}</caption>
                <thead>
                  <tr>
                    <th scope="col">Channel</th>
                    {CHANNEL_COUNTERS.map((c) => <th key={c} scope="col">{c.replace('_', ' ')}</th>)}
                  </tr>
                </thead>
                <tbody>
                  {MESSAGE_CHANNELS.map((ch) => (
                    <tr key={ch}>
                      <th scope="row">{MESSAGE_CHANNEL_LABEL[ch]}</th>
                      {CHANNEL_COUNTERS.map((c) => <td key={c}>{stats.by_channel[ch][c]}</td>)}
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableBox>
            {polling && <p className="muted">Updated every 2 seconds.</p>}
          </>
        )}
      </Loaded>
      <h3>{pages.query ? `Messages, page ${pages.page}` : 'Latest messages'}</h3>
      <Loaded load={messages} retry={again} what="the campaign's messages">
        {(r) => (
          <>
            {r.messages.length === 0 ? (
              <p className="muted">{pages.query ? 'No older messages.' : 'No message yet: they appear here as the campaign sends, one row a person and step.'}</p>
            ) : (
              <MessageTable
                label={pages.query ? `Page ${pages.page} of the campaign's messages: ${r.messages.length} older, newest first` : `The campaign's latest ${r.messages.length} messages, newest first`}
                messages={r.messages}
                person
              />
            )}
            {pages.pager(r.messages.length, MESSAGES, lastShown(r.messages), 'messages')}
          </>
        )}
      </Loaded>
    </section>
  );
}
