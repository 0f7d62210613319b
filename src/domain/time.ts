/** ISO 8601 UTC with milliseconds (DECISIONS §8), or null. */
export function iso(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  return (v instanceof Date ? v : new Date(v as string)).toISOString();
}
