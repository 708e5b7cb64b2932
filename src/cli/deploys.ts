import type { Command } from 'commander';

export function registerDeploys(_program: Command): void {}
