// The builder's buttons: save (a draft when new), and activate, pause or resume, each saving
// what is written; what it did (or Herald's refusal) beside them.
import type { Schemas } from '../../api';
import { Actions } from '../../ui';
import { LIVE } from '../Campaigns';

export function SaveActions({ campaign, busy, done, error, run }: {
  campaign: Schemas['Campaign'] | null;
  busy: boolean;
  done: string;
  error: string;
  /** Saves, with `status` when one is given; `what` is said once it is done. */
  run: (what: string, status?: 'active' | 'paused') => Promise<unknown>;
}) {
  const live = campaign !== null && LIVE.includes(campaign.status);
  return (
    <Actions done={done} error={error}>
      <button type="submit" aria-disabled={busy || undefined}>{campaign ? 'Save' : 'Save as draft'}</button>
      {/* One button, so focus stays on it when activating makes it Pause (and back). */}
      <button type="button" aria-disabled={busy || undefined} onClick={() => void (live ? run('Paused: nothing more is sent until it is resumed.', 'paused') : run('Activated: the campaign is live.', 'active'))}>
        {live ? 'Pause' : campaign?.status === 'paused' ? 'Resume' : 'Activate'}
      </button>
    </Actions>
  );
}
