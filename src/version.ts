import { readFileSync } from 'node:fs';

// Read once from package.json (dist/src/version.js → ../../package.json).
export const VERSION: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
