// The journey canvas (docs/journey-canvas.md) as a browser test reaches it: its steps, their
// handles and edges as xyflow draws them, and a drag from one handle onto another.
import type { Locator, Page } from 'playwright-core';

export function canvasOf(page: Page) {
  /** Step `id` as the canvas draws it. */
  const node = (id: string) => page.locator(`.react-flow__node[data-id="${id}"]`);
  /** Way out `which` of step `id` (a source handle), or the step's entry (its target handle). */
  const handle = (id: string, which: string | 'in') => node(id).locator(which === 'in' ? '.react-flow__handle.target' : `.react-flow__handle.source[data-handleid="${which}"]`);
  const edge = (id: string) => page.locator(`.react-flow__edge[data-id="${id}"]`);
  /** Drags from one handle onto another, as a person does with a mouse. */
  async function drag(from: Locator, to: Locator): Promise<void> {
    await page.locator('.journey-canvas').scrollIntoViewIfNeeded();
    const a = await from.boundingBox();
    const b = await to.boundingBox();
    if (!a || !b) throw new Error('a handle is not on screen');
    await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
    await page.mouse.down();
    await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2 + 10, { steps: 5 });
    await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 5 });
    await page.mouse.up();
  }
  return { node, handle, edge, drag };
}
