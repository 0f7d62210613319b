// Wall-clock times in a chosen time zone, which the browser's Date cannot hold: the schedule
// trigger's send_at is written on the zone's clocks and sent as an instant.

/** The wall-clock offset of `zone` at `instant`, in ms. */
function zoneOffset(instant: number, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
    .formatToParts(new Date(instant));
  const n = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)?.value);
  return Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second')) - Math.floor(instant / 1000) * 1000;
}

/** `YYYY-MM-DDTHH:mm[:ss]` on the clocks of `zone`, as an instant. */
export function localToInstant(local: string, zone: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(local);
  if (!m) return null;
  const [, year, month, day, hour, minute, second = 0] = m;
  const wall = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second));
  try {
    let t = wall - zoneOffset(wall, zone);
    t = wall - zoneOffset(t, zone);
    return new Date(t);
  } catch {
    return null;
  }
}

/** An instant as `YYYY-MM-DDTHH:mm[:ss]` on the clocks of `zone` ('' when it cannot be read). */
export function instantToLocal(iso: string, zone: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  try {
    return new Date(t + zoneOffset(t, zone)).toISOString().slice(0, 19).replace(/:00$/, '');
  } catch {
    return '';
  }
}

/** The time zones offered, UTC first when the browser does not list it. */
export const zones = (): string[] => {
  const supported = (Intl as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
  return supported.includes('UTC') ? supported : ['UTC', ...supported];
};
