#!/usr/bin/env node
// The `hearth` command. Hearth is written in TypeScript and runs through tsx.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
