// A render thread of an actor's render pool (src/render/pool.ts): one send's content rendered
// for each of its recipients, within the budgets the task carries. Parsing again here is cheap
// (templates are cached by source text) and needed: parsed templates cannot cross threads.
import { compileContent, renderAll, type RenderOutcome } from '../src/domain/templates.js';
import type { RenderTask } from '../src/render/pool.js';

export default function render(task: RenderTask): RenderOutcome[] {
  // The pool's hard stop counts from here (src/render/pool.ts).
  Atomics.store(task.started, 0, 1);
  return renderAll(compileContent(task.content, task.fields), task.scopes, task.budget);
}
