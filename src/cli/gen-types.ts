import type { Command } from 'commander';

export function registerGen(_program: Command): void {}
