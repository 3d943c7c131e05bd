/**
 * The AWS SDK prints an 8-line NodeVersionSupportWarning at its first client
 * under Node 20 (its releases after early 2027 need Node 22). The project
 * supports Node 20 (package.json engines) and pins the SDK by its lock file,
 * so the warning says nothing an operator can act on, on every S3 command.
 * The SDK's own switch silences that one warning, and no other; an operator
 * who sets the variable to "false" sees it again.
 */
export function silenceAwsNodeVersionWarning(): void {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
}
