// What the SDK keeps in localStorage, under `herald:<name>`. Storage can be missing or refuse
// writes (some private modes, a full quota): the SDK then works for the life of the page.
const PREFIX = 'herald:';

export function load<T>(name: string): T | null {
  try {
    const v = localStorage.getItem(PREFIX + name);
    return v === null ? null : (JSON.parse(v) as T);
  } catch {
    return null;
  }
}

export function save(name: string, value: unknown): void {
  try {
    if (value === null) localStorage.removeItem(PREFIX + name);
    else localStorage.setItem(PREFIX + name, JSON.stringify(value));
  } catch {
    // Not kept past this page; still sent.
  }
}
