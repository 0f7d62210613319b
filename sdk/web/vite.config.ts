// Built by `npm run build:sdk` into dist/dashboard/sdk/, which Herald serves with the dashboard
// (src/http/dashboard.ts): herald.js, the script-tag bundle (global `herald`), and herald.mjs,
// the ES module. Runs after the dashboard's build, which empties dist/dashboard.
import { defineConfig } from 'vite';

export default defineConfig({
  // Paths are from the repository root, where npm runs the build.
  root: 'sdk/web',
  build: {
    outDir: '../../dist/dashboard/sdk',
    emptyOutDir: true,
    // Browsers of the last few years: no transpiling of what they all run.
    target: 'es2020',
    sourcemap: false,
    lib: {
      entry: 'src/index.ts',
      name: 'herald',
      formats: ['es', 'iife'],
      fileName: (format) => (format === 'es' ? 'herald.mjs' : 'herald.js'),
    },
  },
});
