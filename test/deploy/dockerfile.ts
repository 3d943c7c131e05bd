/**
 * The repository's Dockerfile read as its instructions, by stage, so the
 * tests check and run exactly what an image build would: the files each stage
 * COPYs, its RUN steps, the runtime stage's user, ports, health check and
 * command. Only the instructions the Dockerfile uses are understood; another
 * one fails the read, so a new kind of step is never silently skipped.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');

export interface Copy {
  /** A stage's name for `COPY --from=<stage>`, else the build context (the repository). */
  from?: string;
  sources: string[];
  destination: string;
}

export interface Stage {
  name: string;
  /** The image or earlier stage it starts from. */
  base: string;
  /** In order: what an image build does in this stage. */
  steps: (({ kind: 'copy' } & Copy) | { kind: 'run'; command: string; mounts: string[] })[];
  env: Record<string, string>;
  workdir?: string;
  user?: string;
  expose: number[];
  /** Exec form of HEALTHCHECK CMD and CMD. */
  healthcheck?: { options: string[]; command: string[] };
  cmd?: string[];
}

const KNOWN = new Set(['ARG', 'FROM', 'WORKDIR', 'COPY', 'RUN', 'ENV', 'USER', 'EXPOSE', 'HEALTHCHECK', 'CMD']);

/** Logical lines: comments dropped, backslash continuations joined. */
function instructions(text: string): { keyword: string; args: string }[] {
  const lines: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    if (/^\s*#/.test(raw) && current === '') continue;
    const line = raw.trimEnd();
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    current += line;
    if (current.trim() !== '') lines.push(current.trim());
    current = '';
  }
  return lines.map((line) => {
    const keyword = line.split(/\s+/)[0] ?? '';
    return { keyword: keyword.toUpperCase(), args: line.slice(keyword.length).trim() };
  });
}

/** `--name=value` flags at the front of an instruction's arguments, and the rest. */
function flags(args: string): { flags: Record<string, string[]>; rest: string } {
  const found: Record<string, string[]> = {};
  let rest = args;
  for (let m = /^--([a-z-]+)=(\S+)\s+/.exec(rest); m; m = /^--([a-z-]+)=(\S+)\s+/.exec(rest)) {
    const [whole, name = '', value = ''] = m;
    found[name] = [...(found[name] ?? []), value];
    rest = rest.slice(whole.length);
  }
  return { flags: found, rest };
}

export function readDockerfile(path = resolve(ROOT, 'Dockerfile')): Stage[] {
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  const expand = (text: string) => text.replace(/\$\{(\w+)\}/g, (_, name: string) => args[name] ?? '');
  for (const { keyword, args: text } of instructions(readFileSync(path, 'utf8'))) {
    if (!KNOWN.has(keyword))
      throw new Error(`the Dockerfile uses ${keyword}, which test/deploy/dockerfile.ts does not read`);
    if (keyword === 'ARG') {
      const [name = '', value = ''] = text.split('=');
      args[name] = value;
      continue;
    }
    if (keyword === 'FROM') {
      const m = /^(\S+)\s+AS\s+(\S+)$/i.exec(expand(text));
      if (!m) throw new Error(`every stage needs a name: FROM ${text}`);
      stages.push({ base: m[1] as string, name: m[2] as string, steps: [], env: {}, expose: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new Error(`${keyword} before the first FROM`);
    if (keyword === 'WORKDIR') stage.workdir = text;
    else if (keyword === 'USER') stage.user = text;
    else if (keyword === 'EXPOSE') stage.expose.push(...text.split(/\s+/).map(Number));
    else if (keyword === 'ENV') {
      const [name = '', value = ''] = text.split('=');
      stage.env[name] = value;
    } else if (keyword === 'CMD') stage.cmd = JSON.parse(text) as string[];
    else if (keyword === 'RUN') {
      const parsed = flags(text);
      stage.steps.push({ kind: 'run', command: parsed.rest, mounts: parsed.flags.mount ?? [] });
    } else if (keyword === 'COPY') {
      const parsed = flags(text);
      const paths = parsed.rest.split(/\s+/);
      stage.steps.push({
        kind: 'copy',
        from: parsed.flags.from?.[0],
        sources: paths.slice(0, -1),
        destination: paths.at(-1) as string,
      });
    } else if (keyword === 'HEALTHCHECK') {
      const at = text.indexOf(' CMD ');
      stage.healthcheck = {
        options: text.slice(0, at).split(/\s+/),
        command: JSON.parse(text.slice(at + ' CMD '.length)) as string[],
      };
    }
  }
  return stages;
}

export function stageNamed(stages: Stage[], name: string): Stage {
  const stage = stages.find((s) => s.name === name);
  if (!stage) throw new Error(`the Dockerfile has no stage ${name}`);
  return stage;
}
