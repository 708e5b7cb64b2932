import type { Command } from 'commander';

export function registerMigrations(_program: Command): void {}
