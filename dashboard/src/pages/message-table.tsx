// A table of messages on every channel, as the status route shows them: the person's message
// history (Person.tsx) and a campaign's latest messages while it runs (CampaignBuilder.tsx).
import type { paths } from '../generated/openapi';
import { TableBox, when } from '../ui';

type Message = paths['/workspaces/{workspaceId}/people/{personId}/messages']['get']['responses'][200]['content']['application/json']['messages'][number];
const CHANNEL = { push: 'Push', email: 'Email', sms: 'SMS' } as const;

/** `person`: a column naming each message's person (their user ID). */
export function MessageTable({ label, messages, person = false }: { label: string; messages: Message[]; person?: boolean }) {
  return (
    <TableBox label={label}>
      <table>
        <caption className="sr-only">{label}</caption>
        <thead>
          <tr>
            <th scope="col">Created</th>
            {person && <th scope="col">Person</th>}
            <th scope="col">Channel</th><th scope="col">Title</th><th scope="col">Status</th><th scope="col">Sent to</th>
          </tr>
        </thead>
        <tbody>
          {messages.map((m) => (
            <tr key={m.message_id}>
              <td>{when(m.created_at)}</td>
              {person && <td>{m.external_id}</td>}
              <td>{CHANNEL[m.channel]}</td>
              <td>{m.title ?? '—'}<div className="muted">{m.body}</div></td>
              <td>{m.status}{m.skip_reason && <div className="muted">{m.skip_reason.replaceAll('_', ' ')}</div>}{m.error && <div className="error">{m.error}</div>}</td>
              <td>
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
