/**
 * What every command handler gets: the environment to read its configuration
 * from, a way to connect, and where to write. Handlers take it as a parameter
 * so tests can run them without a process or a server. Each command reads
 * only the configuration it uses (loadClientConfig, loadBudgetSettings,
 * loadFeeds), so a typo in a worker-only variable never blocks it.
 */
import type { TemporalConfig } from '../../temporal.config.js';
import { type CliClient, connectClient } from './connect.js';
import { namingTheServer } from './server-errors.js';

export interface CliContext {
  env: Record<string, string | undefined>;
  connect(temporal: TemporalConfig): Promise<CliClient>;
  /** Results, for a pipe. */
  print(line: string): void;
  /** Warnings and progress, for a person. */
  warn(line: string): void;
  now(): Date;
}

export const processContext: CliContext = {
  env: process.env,
  connect: connectClient,
  print: (line) => process.stdout.write(`${line}\n`),
  warn: (line) => process.stderr.write(`${line}\n`),
  now: () => new Date(),
};

/** Runs `use` with a connected client and always closes the connection; a server's failure names the server. */
export async function withClient<T>(
  ctx: CliContext,
  temporal: TemporalConfig,
  use: (c: CliClient) => Promise<T>,
): Promise<T> {
  const connected = await ctx.connect(temporal);
  try {
    return await use(connected);
  } catch (err) {
    throw namingTheServer(err, temporal);
  } finally {
    await connected.close();
  }
}
