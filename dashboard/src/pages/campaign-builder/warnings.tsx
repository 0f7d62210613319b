// What the builder warns of before activating: its own findings and Herald's warnings on the
// workflow it saved, each step named as the builder names it.
import type { Schemas } from '../../api';
import { stepName, type WorkflowNode } from '../workflow';
import { SENDS } from '../journey/graph';

type Template = Schemas['MessageTemplate'];

/** What activating would warn of, known before asking Herald. */
export function warningsOf(nodes: WorkflowNode[], templates: Template[]): string[] {
  const out: string[] = [];
  nodes.forEach((n, i) => {
    if (n.type !== 'email') return;
    const t = n.template_id ? templates.find((x) => x.id === n.template_id) : undefined;
    const html = String(n.html ?? t?.html ?? '');
    if (html && !/unsubscribe_url/.test(html)) out.push(`${stepName(n, i)}: its HTML has no {{ unsubscribe_url }} link, so recipients cannot unsubscribe from the message itself (the List-Unsubscribe header is still sent).`);
  });
  if (!nodes.some((n) => SENDS.includes(n.type))) out.push('The workflow sends nothing yet: add a push, email or SMS step.');
  return out;
}

/**
 * Herald's warnings on the workflow it saved ("email node email-1: …"), less those of a step
 * `known` already warns of (said by warningsOf, which also reads templates), the rest naming
 * the step as the builder does.
 */
export function heraldWarnings(warned: string[], nodes: WorkflowNode[], known: string[]): string[] {
  return warned.flatMap((w) => {
    const [, id, said] = /^\w+ node (\S+): (.*)$/.exec(w) ?? [];
    const i = nodes.findIndex((n) => n.id === id);
    const node = nodes[i];
    if (!id || !node) return [w];
    const name = stepName(node, i);
    return known.some((k) => k.startsWith(`${name}:`)) ? [] : [`${name}: ${said}`];
  });
}

export function Warnings({ shown }: { shown: string[] }) {
  if (shown.length === 0) return null;
  return (
    <div className="notice" role="note" aria-label="Warnings">
      <p><strong>Before activating</strong></p>
      <ul>
        {[...new Set(shown)].map((w) => <li key={w}>{w}</li>)}
      </ul>
    </div>
  );
}
