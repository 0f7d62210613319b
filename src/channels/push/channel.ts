// The push channel (docs/channels.md): a person's addresses are their sendable devices, each sent
// through its platform's provider (channels/push/registry.ts) by the actor's push engine
// (channels/push/engine.ts), which runs the decisions every channel shares, the whole send policy
// included. The engine is the actor's (it holds the send counters and the workspaces' shares of
// provider calls), handed to the channel pools as PUSH_ENGINE.
import { nodeContent } from '../../domain/campaigns.js';
import { compileContent } from '../../domain/templates.js';
import type { Channel } from '../channel.js';
import type { PoolKind } from '../pools.js';
import type { PushEngine } from './engine.js';
import { PUSH_RULES } from './rules.js';

/** The actor's push engine, handed in by the actor (workers/actor.ts). */
export const PUSH_ENGINE: PoolKind<PushEngine> = { name: 'push engine' };

export const push: Channel = {
  ...PUSH_RULES,
  async sendNode(deps, send, recipients) {
    const { node } = send;
    if (node.type !== 'push') throw new Error(`the push channel was given a ${node.type} node`);
    const content = compileContent(nodeContent(node, send.templates));
    const outcomes = await deps.pools.of(PUSH_ENGINE).send(
      {
        workspaceId: send.workspaceId, content, campaignId: send.campaignId, nodeId: node.id, tags: send.tags, renderErrors: 'fail', withRecords: send.withRecords, optedOut: send.optedOut,
        // A test send is outside the policy, caps included; a campaign step honours the node's bypass_frequency_cap.
        ...(send.outsidePolicy ? { outsidePolicy: true } : { bypassCaps: node.bypass_frequency_cap === true }),
      },
      recipients.map((r) => ({ person: r.person, variables: r.variables, scheduledId: r.id, event: r.event, trigger: r.trigger, eventId: r.eventId })),
    );
    return outcomes.map((o, i) => ({
      id: o.id ?? recipients[i]!.id, status: o.status, provider: o.provider, provider_id: o.provider_id ?? null, address: null, skip_reason: o.skip_reason ?? null, error: o.error ?? null,
    }));
  },
};
