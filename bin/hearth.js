#!/usr/bin/env node
// Runs the TypeScript companion through tsx so no compile step stands between install and start.
import { register } from 'tsx/esm/api';

register();
await import('../companion/src/main.ts');
