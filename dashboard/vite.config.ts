// Built by `npm run build` (scripts/build-dashboard.mjs) into dist/dashboard, which Herald
// serves at /dashboard/ (src/http/dashboard.ts).
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  // Paths are from the repository root, where npm runs the build.
  root: 'dashboard',
  base: '/dashboard/',
  plugins: [react()],
  build: {
    outDir: '../dist/dashboard',
    emptyOutDir: true,
    // Content-hashed names under assets/ (served with a year's cache).
    assetsDir: 'assets',
    // The CSP allows no inline script or style: nothing may be inlined as a data: URL either.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
});
