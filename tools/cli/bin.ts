#!/usr/bin/env node
// Kept for callers that run dist/tools/cli/bin.js directly (tests, older docs). The
// executable is attend.cjs (see there for why it is CommonJS).
import { createRequire } from 'node:module';

createRequire(import.meta.url)('./attend.cjs');
