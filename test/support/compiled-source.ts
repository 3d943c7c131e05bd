/**
 * The project's TypeScript transpiled to JavaScript once per `npm test` run
 * (test/support/compile-once.ts), for the Node processes the tests start:
 * the worker (worker-process.ts, main-process.test.ts) and the CLI. Each file
 * is transpiled on its own by esbuild, as tsx does it at every start, with no
 * type check; the layout is kept under a folder of the checkout, so relative
 * paths hold (the package.json walk, the workflow sources beside the worker)
 * and packages resolve from the checkout's node_modules. A process started on
 * the copy skips tsx's loader: about 1 CPU s less per start here, and a run
 * starts some sixty.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';
import { inject } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Everything a started process may import: the product, the test entry points and the simulator. */
const SOURCES = ['worker', 'activities', 'workflows', 'test/support', 'test/simulator', 'temporal.config.ts'];

/** What tsconfig.json sets that changes emitted code (tsx reads the same). */
const TSCONFIG_RAW = { compilerOptions: { target: 'ES2022', verbatimModuleSyntax: true } } as const;

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder holding this run's transpiled copy of the sources (absent when transpiling failed). */
    compiledSourceDir: string;
  }
}

/** Writes every .ts file of SOURCES, transpiled, under `outDir` at its path relative to the checkout. */
export async function compileSources(outDir: string): Promise<void> {
  const files = SOURCES.flatMap((source) => typeScriptFiles(join(ROOT, source)));
  await Promise.all(
    files.map(async (file) => {
      const { code } = await transform(readFileSync(file, 'utf8'), {
        loader: 'ts',
        format: 'esm',
        target: 'es2022',
        sourcefile: file,
        tsconfigRaw: TSCONFIG_RAW,
      });
      const out = join(outDir, relative(ROOT, file)).replace(/\.ts$/, '.js');
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, code);
    }),
  );
}

function typeScriptFiles(path: string): string[] {
  if (path.endsWith('.ts')) return [path];
  return readdirSync(path, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() || entry.name.endsWith('.ts') ? typeScriptFiles(join(path, entry.name)) : [],
  );
}

/**
 * Node's arguments that run `entry` (a .ts file of the checkout): its transpiled copy when this run made
 * one, else the source under tsx (a file run outside `npm test`'s setup, a benchmark).
 */
export function nodeArgsFor(entry: string): string[] {
  const source = resolve(ROOT, entry);
  const dir = process.env.VITEST_WORKER_ID ? inject('compiledSourceDir') : undefined;
  if (!dir) return ['--import', 'tsx', source];
  return [join(dir, relative(ROOT, source)).replace(/\.ts$/, '.js')];
}
