// Matches a method and a path against the route table. Static segments beat parameters
// (`/people/search` before `/people/{id}`); a path that exists under other methods is a 405.
import type { Method, Route } from '../routes.js';

interface Compiled {
  route: Route;
  segments: (string | { param: string })[];
  statics: number;
}

export type Match =
  | { kind: 'route'; route: Route; params: Record<string, string> }
  | { kind: 'method'; allowed: Method[]; route: Route }
  | { kind: 'none' };

export class Router {
  private readonly byLength = new Map<number, Compiled[]>();

  constructor(routes: readonly Route[], private readonly prefix: string) {
    for (const route of routes) {
      const segments = route.path.split('/').slice(1).map((s) => (s.startsWith('{') ? { param: s.slice(1, -1) } : s));
      const c: Compiled = { route, segments, statics: segments.filter((s) => typeof s === 'string').length };
      const list = this.byLength.get(segments.length) ?? [];
      list.push(c);
      list.sort((a, b) => b.statics - a.statics);
      this.byLength.set(segments.length, list);
    }
  }

  match(method: string, url: string): Match {
    if (!url.startsWith(this.prefix + '/')) return { kind: 'none' };
    const parts = url.slice(this.prefix.length + 1).split('/');
    if (parts[parts.length - 1] === '' && parts.length > 1) parts.pop();
    const candidates = this.byLength.get(parts.length);
    if (!candidates) return { kind: 'none' };
    let pathMatch: Compiled | undefined;
    const allowed: Method[] = [];
    let bestStatics = -1;
    for (const c of candidates) {
      if (c.statics < bestStatics) break;
      const params = bind(c, parts);
      if (!params) continue;
      bestStatics = c.statics;
      if (c.route.method === method) return { kind: 'route', route: c.route, params };
      pathMatch ??= c;
      allowed.push(c.route.method);
    }
    return pathMatch ? { kind: 'method', allowed, route: pathMatch.route } : { kind: 'none' };
  }
}

function bind(c: Compiled, parts: string[]): Record<string, string> | null {
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const seg = c.segments[i]!;
    const part = parts[i]!;
    if (typeof seg === 'string') {
      if (seg !== part) return null;
    } else {
      if (part === '') return null;
      try {
        params[seg.param] = decodeURIComponent(part);
      } catch {
        return null;
      }
    }
  }
  return params;
}
