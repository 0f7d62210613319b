#!/usr/bin/env node
// Runs the compiled CLI (npm run build produces dist/).
import '../dist/src/cli.js';
