// Minimal structured logger: one JSON line per entry on stderr. Herald logs at start-up,
// on warnings and errors only; nothing per request at info level (ARCHITECTURE rule 5).
import { threadId } from 'node:worker_threads';

const levels = { debug: 10, info: 20, warn: 30, error: 40 } as const;
export type Level = keyof typeof levels;

let threshold: number = levels[(process.env.HERALD_LOG_LEVEL as Level) ?? 'info'] ?? levels.info;

export function setLogLevel(level: Level): void {
  threshold = levels[level];
}

function write(level: Level, msg: string, fields?: Record<string, unknown>): void {
  if (levels[level] < threshold) return;
  const entry = { t: new Date().toISOString(), level, thread: threadId, msg, ...fields };
  process.stderr.write(JSON.stringify(entry, (_k, v) => (v instanceof Error ? { message: v.message, stack: v.stack } : v)) + '\n');
}

export const logger = {
  debug: (msg: string, f?: Record<string, unknown>) => write('debug', msg, f),
  info: (msg: string, f?: Record<string, unknown>) => write('info', msg, f),
  warn: (msg: string, f?: Record<string, unknown>) => write('warn', msg, f),
  error: (msg: string, f?: Record<string, unknown>) => write('error', msg, f),
};
