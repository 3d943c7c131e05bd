/**
 * What every command handler gets: configuration, a way to connect, and
 * where to write. Handlers take it as a parameter so tests can run them
 * without a process or a server.
 */
import { type Config, loadConfig } from '../../temporal.config.js';
import { type CliClient, connectClient } from './connect.js';

export interface CliContext {
  config(): Config;
  connect(config: Config): Promise<CliClient>;
  /** Results, for a pipe. */
  print(line: string): void;
  /** Warnings and progress, for a person. */
  warn(line: string): void;
  now(): Date;
}

export const processContext: CliContext = {
  config: () => loadConfig(),
  connect: connectClient,
  print: (line) => process.stdout.write(`${line}\n`),
  warn: (line) => process.stderr.write(`${line}\n`),
  now: () => new Date(),
};

/** Runs `use` with a connected client and always closes the connection. */
export async function withClient<T>(ctx: CliContext, config: Config, use: (c: CliClient) => Promise<T>): Promise<T> {
  const connected = await ctx.connect(config);
  try {
    return await use(connected);
  } finally {
    await connected.close();
  }
}
