// The event names this workspace's events have had (GET …/event-names), offered as buttons to
// pick from: the event trigger's names and the goal's event.
import { api, call } from '../../api';
import { useLoad, when } from '../../ui';

export function SeenEventNames({ workspaceId, skip, label, action, pick }: {
  workspaceId: string;
  /** Names already chosen: not offered again. */
  skip: string[];
  /** The group's accessible name. */
  label: string;
  /** Each button's accessible name, saying what picking the name does. */
  action: (name: string) => string;
  pick: (name: string) => void;
}) {
  const [seen] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/event-names', { params: { path: { workspaceId }, query: { limit: 50 } } })), [workspaceId]);
  const offered = seen.state === 'done' ? seen.data.names.filter((n) => !skip.includes(n.name)) : [];
  if (offered.length === 0) return null;
  return (
    <p role="group" aria-label={label}>
      <span className="muted">Seen in this workspace: </span>
      {offered.map((n) => (
        <button key={n.name} type="button" className="link" aria-label={action(n.name)} title={`Last seen ${when(n.last_seen_at)}`} onClick={() => pick(n.name)}>
          {n.name}
        </button>
      ))}
    </p>
  );
}
