// PLACEHOLDER until branch push-rules lands (Liquid templates).
export interface PushContent { title?: string; body?: string; image_url?: string; action_url?: string; custom_data?: Record<string, unknown> }
export interface TemplateScope { variables: Record<string, unknown>; person: Record<string, unknown>; traits: Record<string, unknown> }
export interface CompiledContent { source: PushContent }
export function compileContent(c: PushContent): CompiledContent {
  return { source: c };
}
export function renderContent(c: CompiledContent, _scope: TemplateScope): PushContent {
  return c.source;
}
