#!/usr/bin/env node
// The `skein` executable: registers tsx so the TypeScript sources run as they are
// (no build step), then hands over to main.ts. Kept in plain JS on purpose.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
