// `npm start` runs compiled JavaScript and serves the built dashboard; build first when dist/ is
// missing or older than a source.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const newest = (dir) => {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (p === join('bench', 'results')) continue; // bench output, not a source
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
};
const stamp = 'dist/.build-stamp';
const sources = Math.max(...['src', 'workers', 'schemas', 'bench', 'dashboard', 'sdk'].filter(existsSync).map(newest), statSync('tsconfig.json').mtimeMs, statSync('package.json').mtimeMs);
if (!existsSync(stamp) || statSync(stamp).mtimeMs < sources) {
  process.stdout.write('Building Herald (TypeScript and the dashboard to dist/; under a minute on a quiet 2-core machine, longer on a busy one)\n');
  execFileSync('npm', ['run', '-s', 'build'], { stdio: 'inherit' });
}
