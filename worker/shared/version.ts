/**
 * The package version, for `--version` and the worker's start-up line. Found
 * by walking up from this module, because it runs both from source
 * (worker/) and compiled (dist/worker/).
 */
import { existsSync, readFileSync } from 'node:fs';

export function packageVersion(): string {
  for (let dir = new URL('./', import.meta.url); dir.pathname !== '/'; dir = new URL('../', dir)) {
    const file = new URL('package.json', dir);
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === 'company-data-import-worker') return pkg.version ?? 'unknown';
  }
  return 'unknown';
}
