/**
 * import-worker: the operator's command line. Each command reads only the
 * configuration it uses (temporal.config.ts), fails with one line and the
 * exit code of exit-codes.ts (2: usage or configuration, 1: it ran and
 * failed), and prints results on stdout, warnings and progress on stderr.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import {
  CSV_ENCODINGS,
  ENTITY_TYPES,
  LIST_ACTIONS,
  ON_FAILURE_MODES,
  ON_REJECTED_ROWS,
} from '../../workflows/contracts/import-input.js';
import { abandonSignal, retrySignal } from '../../workflows/contracts/messages.js';
import { EXIT } from '../shared/exit-codes.js';
import { packageVersion } from '../shared/version.js';
import { budgetCommand } from './budget-command.js';
import { errorLine, exitCodeOf, Interrupted } from './cli-error.js';
import { type CliContext, processContext } from './context.js';
import { checkDryRunFlags, startDryRunCommand, triggerDryRunCommand } from './dry-run-command.js';
import { type ListFlags, listCommand } from './list-command.js';
import {
  type ApplyFlags,
  schedulesApplyCommand,
  schedulesListCommand,
  schedulesTriggerCommand,
} from './schedule-commands.js';
import { cancelCommand, signalCommand } from './signal-commands.js';
import { startCommand } from './start-command.js';
import { statusCommand } from './status-command.js';

const ENVIRONMENT_HELP = `
Configuration comes from the environment, as for the worker: TEMPORAL_ADDRESS,
TEMPORAL_NAMESPACE, IMPORT_TASK_QUEUE, TEMPORAL_UI_URL, IMPORT_TENANT,
IMPORT_FEEDS_FILE, the IMPORT_BUDGET_* limits (see docs/configuration.md). Exit codes: 0 done, 1 it ran and failed (status: the workflow failed,
was cancelled, terminated or timed out; retry/abandon/cancel: refused), 2 usage
or configuration error, 130 stopped by Ctrl-C. The reference: docs/cli.md.`;

function buildProgram(ctx: CliContext): Command {
  const program = new Command('import-worker')
    .description(
      'Operate the bulk-import pipeline: start and follow imports, answer failures, read budgets, manage nightly schedules.',
    )
    .version(packageVersion(), '-V, --version', 'print the version')
    .showSuggestionAfterError()
    // Throw instead of exiting, so one place (main) decides every exit code.
    .exitOverride()
    .configureOutput({ outputError: (text) => ctx.warn(text.trimEnd()) })
    .addHelpText('after', ENVIRONMENT_HELP);

  program
    .command('start')
    .description(
      'Start an importFile workflow for one CSV object in S3 and print its workflow id and Temporal UI link.',
    )
    .option('--bucket <bucket>', 'S3 bucket holding the CSV file')
    .option('--key <key>', 'S3 object key of the CSV file')
    .option('--name <name>', "dataImportName of the job (default: the key's file name)")
    .addOption(new Option('--entity-type <type>', 'what the rows are').choices([...ENTITY_TYPES]))
    .addOption(
      new Option(
        '--list-action <action>',
        'list membership change; replace and delete remove members (default: noop)',
      ).choices([...LIST_ACTIONS]),
    )
    .option('--activity-type-id <id>', 'activity type id (required when --entity-type is Activity)')
    .option('--import-source <source>', 'create-job source field (service default: CSV)')
    .option('--mappings-file <file>', 'JSON file with the field mappings: { sourceId, objectType, mappings: [...] }')
    .option('--tenant <tenant>', 'whose daily budget the calls count against (default: IMPORT_TENANT)')
    .addOption(
      new Option(
        '--on-failure <mode>',
        'fail, or await-retry: wait for "retry"/"abandon" after a fixable failure',
      ).choices([...ON_FAILURE_MODES]),
    )
    .addOption(
      new Option(
        '--on-rejected-rows <mode>',
        'rows the service would refuse: skip sends the rest, fail fails before any job (default: fail); both write a rejects report',
      ).choices([...ON_REJECTED_ROWS]),
    )
    .option('--delimiter <d>', "the file's delimiter: , ; | or tab (default: read from the header row)")
    .addOption(
      new Option(
        '--encoding <enc>',
        "the file's encoding (default utf-8; UTF-16 is read from its byte order mark)",
      ).choices([...CSV_ENCODINGS]),
    )
    .option(
      '--rejects-prefix <prefix>',
      'where the rejects report goes: s3://bucket/prefix/ or a key prefix (default: beside the file)',
    )
    .option('--input <file>', 'JSON file holding the whole importFile input, instead of the flags above')
    .option(
      '--workflow-id <id>',
      "workflow id (default: the object version's, import-<hash of bucket/key/ETag>, as the nightly uses; a version already imported is not imported again)",
    )
    .option('--wait', 'follow the import with a progress bar until it ends; exit 1 if it failed')
    .option('--dry-run', 'report what the import would do (preflight, mapping diff, job, budgets); change nothing')
    .option('--json', 'with --dry-run: print the report as JSON')
    .action((options) => {
      checkDryRunFlags(options);
      return options.dryRun ? startDryRunCommand(options, ctx) : startCommand(options, ctx);
    });

  program
    .command('status')
    .description(
      'Show where a workflow is (an import: phase, job, bytes, waits; a nightly run, a budget ledger, a job record) or how it ended; exit 1 if it failed.',
    )
    .argument('<workflowId>', 'the workflow id')
    .option('--json', 'print the report as JSON')
    .action((workflowId: string, options: { json?: boolean }) => statusCommand(workflowId, options, ctx));

  program
    .command('list')
    .description('List the imports running now (waiting ones say for what), newest first; --failed adds failed ones.')
    .option('--failed', 'also list imports that failed')
    .option('--limit <n>', `list at most this many (default 50)`)
    .option('--json', 'print the list as JSON')
    .action((options: ListFlags) => listCommand(options, ctx));

  program
    .command('retry')
    .description(
      'Tell an import waiting after a fixable failure (onFailure await-retry) to run the failed step again; refused (exit 1) for anything else.',
    )
    .argument('<workflowId>', "the import's workflow id")
    .action((workflowId: string) => signalCommand(retrySignal, workflowId, ctx));

  program
    .command('abandon')
    .description(
      "Tell an import waiting after a failure to give up: it fails with the step's error; refused (exit 1) for anything else.",
    )
    .argument('<workflowId>', "the import's workflow id")
    .action((workflowId: string) => signalCommand(abandonSignal, workflowId, ctx));

  program
    .command('cancel')
    .description('Cancel a running import: its current step stops and it ends CANCELLED.')
    .argument('<workflowId>', "the import's workflow id")
    .action((workflowId: string) => cancelCommand(workflowId, ctx));

  program
    .command('budget')
    .description('Show the daily API budgets as the ledger counts them: used, limit, remaining, reset time.')
    .option('--tenant <tenant>', 'tenant to show (default: IMPORT_TENANT)')
    .option('--json', 'print the budgets as JSON')
    .action((options: { tenant?: string; json?: boolean }) => budgetCommand(options, ctx));

  const schedules = program
    .command('schedules')
    .description('Manage the nightly Temporal Schedules, one per feed in IMPORT_FEEDS_FILE.');
  schedules
    .command('apply')
    .description('Create or update one schedule (nightly-<feedId>) per configured feed; idempotent.')
    .option('--dry-run', 'print the plan without changing anything')
    .option(
      '--prune',
      'also delete nightly-* schedules whose feed is no longer configured (refused when no feed is configured)',
    )
    .option('--prune-all', 'as --prune, also when no feed is configured: then every nightly-* schedule is deleted')
    .action((options: ApplyFlags) => schedulesApplyCommand(options, ctx));
  schedules
    .command('list')
    .description('List the nightly schedules with their state, next and last run.')
    .action(() => schedulesListCommand(ctx));
  schedules
    .command('trigger')
    .description("Run a feed's nightly import now (skipped if its previous run is still going).")
    .argument('<feedId>', 'the feed id from IMPORT_FEEDS_FILE')
    .option('--dry-run', "report what the nightly would import and each object's verdict; change nothing")
    .option('--limit <n>', 'with --dry-run: check at most this many objects (default 20)')
    .option('--json', 'with --dry-run: print the report as JSON')
    .action((feedId: string, options: { dryRun?: boolean; json?: boolean; limit?: string }) => {
      checkDryRunFlags(options);
      return options.dryRun ? triggerDryRunCommand(feedId, options, ctx) : schedulesTriggerCommand(feedId, ctx);
    });

  return program;
}

/** Runs the CLI; resolves to the exit code. */
export async function main(argv: string[], ctx: CliContext = processContext): Promise<number> {
  try {
    await buildProgram(ctx).parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    // Commander has already written its own one line (or the help or version).
    if (err instanceof Interrupted) ctx.warn(err.message);
    else if (!(err instanceof CommanderError)) ctx.warn(`error: ${errorLine(err)}`);
    return exitCodeOf(err);
  }
}

function isEntryPoint(): boolean {
  return process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
}

/**
 * A reader that stops early (`import-worker budget | head -1`) closes the pipe: the rest of the output has
 * nowhere to go, which is no failure of the command. End quietly, as `cat` and `ls` do, not with a stack trace.
 */
function endQuietlyWhenTheReaderLeaves(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(process.exitCode ?? EXIT.ok);
  });
}

if (isEntryPoint()) {
  endQuietlyWhenTheReaderLeaves();
  process.exitCode = await main(process.argv);
}
