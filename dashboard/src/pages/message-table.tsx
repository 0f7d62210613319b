// A table of messages on every channel, as the status route shows them: the person's message
// history (Person.tsx) and a campaign's latest messages while it runs (CampaignBuilder.tsx).
// Its columns have set widths and long text is cut (shown whole on demand), so Status and
// "Sent to" stay on screen; at phone width each message is a block of labelled lines.
import { useState } from 'react';
import type { paths } from '../generated/openapi';
import { TableBox, when } from '../ui';
import { MESSAGE_CHANNEL_LABEL } from '../enums';

type Message = paths['/workspaces/{workspaceId}/people/{personId}/messages']['get']['responses'][200]['content']['application/json']['messages'][number];
/** Characters of a message's text shown before it is cut. */
const CUT = 160;

/** `person`: a column naming each message's person (their user ID). */
export function MessageTable({ label, messages, person = false }: { label: string; messages: Message[]; person?: boolean }) {
  return (
    <TableBox label={label}>
      <table className="messages">
        <caption className="sr-only">{label}</caption>
        <thead>
          <tr>
            <th scope="col" className="when">Created</th>
            {person && <th scope="col" className="who">Person</th>}
            <th scope="col" className="channel">Channel</th><th scope="col">Title</th><th scope="col" className="status">Status</th><th scope="col" className="to">Sent to</th>
          </tr>
        </thead>
        <tbody>
          {messages.map((m) => (
            <tr key={m.message_id}>
              <td data-label="Created">{when(m.created_at)}</td>
              {person && <td data-label="Person">{m.external_id}</td>}
              <td data-label="Channel">{MESSAGE_CHANNEL_LABEL[m.channel]}</td>
              <td data-label="Title">{m.title ?? '—'}{m.body && <LongText text={m.body} />}</td>
              <td data-label="Status">
                <span className={`badge ${m.status}`}>{m.status}</span>
                {m.tags?.includes('test') && <> <span className="badge test">Test send</span></>}
                {m.skip_reason ? <div>{m.skip_reason.replaceAll('_', ' ')}</div> : m.error && <div className="error">{m.error}</div>}
              </td>
              <td data-label="Sent to">
                {!m.to && !m.platform && m.deliveries.length === 0 && '—'}
                {m.to && <div><code>{m.to}</code></div>}
                {m.platform && <div>{m.platform}</div>}
                {m.deliveries.map((d) => <div key={d.device_id}><code>{d.device_token}</code> {d.status}</div>)}
                {m.events && m.events.length > 0 && (
                  <ul className="plain" aria-label="Provider events">
                    {m.events.map((ev, i) => <li key={i}>{ev.type.replaceAll('_', ' ')} <span className="muted">{when(ev.at)}</span>{typeof ev.details?.url === 'string' && <div className="muted">{ev.details.url}</div>}</li>)}
                  </ul>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

/** A message's text, cut after CUT characters with a button that shows it whole (its line breaks kept). */
function LongText({ text }: { text: string }) {
  const [whole, setWhole] = useState(false);
  if (text.length <= CUT) return <div className="muted">{text}</div>;
  return (
    <>
      <div className={whole ? 'muted whole' : 'muted'}>{whole ? text : `${text.slice(0, CUT).trimEnd()}…`}</div>
      <button type="button" className="link" aria-expanded={whole} onClick={() => setWhole(!whole)}>Show the whole message</button>
    </>
  );
}
