// Route id → handler, for every route an actor serves.
import type { Handler } from './context.js';
import { workspaceHandlers } from '../domain/workspaces.js';
import { apiKeyHandlers } from '../domain/api-keys.js';
import { peopleHandlers } from '../domain/people.js';
import { deviceHandlers } from '../domain/devices.js';
import { eventHandlers } from '../domain/events.js';

export const handlers: Record<string, Handler> = { ...workspaceHandlers, ...apiKeyHandlers, ...peopleHandlers, ...deviceHandlers, ...eventHandlers };
