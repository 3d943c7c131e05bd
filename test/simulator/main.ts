/**
 * Runs the simulator on its own (`npm run simulator -- --port 8089`) for the
 * upload benchmark and the local demo: prints the base URL and the demo
 * tokens, and stops cleanly on SIGINT/SIGTERM.
 */
import { parseMainArgs, USAGE } from './main-args.js';
import { DEFAULT_TOKENS, DEMO_CLIENT, startSimulator } from './server.js';

async function main(): Promise<void> {
  let args: ReturnType<typeof parseMainArgs>;
  try {
    args = parseMainArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`simulator: ${(error as Error).message} (see --help)`);
    process.exitCode = 2;
    return;
  }
  if (args.help) {
    console.log(USAGE);
    return;
  }

  const sim = await startSimulator({
    host: args.host,
    port: args.port,
    processingMs: args.processingMs,
    completedHistory: args.completedHistory,
    resetMinuteUtc: args.resetMinuteUtc,
  });
  // Before printing the URL: whoever reads it may signal at once.
  const stop = (signal: string) => {
    console.log(`simulator: ${signal}, shutting down`);
    sim.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  console.log(`Company Data Service simulator listening on ${sim.baseUrl}`);
  console.log('Demo tokens (Authorization: Bearer <token>):');
  for (const [token, grant] of Object.entries(DEFAULT_TOKENS)) {
    const what = grant.expired ? 'expired (answers 401)' : `permissions: ${grant.permissions.join(', ') || '(none)'}`;
    console.log(`  ${token.padEnd(26)} ${what}`);
  }
  console.log(
    `Demo client (POST /auth/v1/token, or COMPANY_DATA_CLIENT_ID / COMPANY_DATA_CLIENT_SECRET): ${DEMO_CLIENT.id} / ${DEMO_CLIENT.secret}`,
  );
  console.log(`Inspect: ${sim.baseUrl}/__sim/requests, /__sim/jobs, /__sim/counters; faults: POST /__sim/faults`);
}

main().catch((error: unknown) => {
  console.error(`simulator: failed to start: ${(error as Error).message}`);
  process.exit(1);
});
