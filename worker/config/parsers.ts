/**
 * Parsers of variable text. A parser turns the variable's text into its value
 * (its range included) or fails naming the variable, what it expects and what
 * it got.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { fail } from './errors.js';
import { parseDuration, parseSize } from './units.js';

export type Parse<T> = (text: string, name: string) => T;

export const matching =
  (pattern: RegExp, expected: string): Parse<string> =>
  (text, name) =>
    pattern.test(text) ? text : fail(name, expected, text);

export const wholeNumber =
  (min: number, max: number): Parse<number> =>
  (text, name) => {
    const n = Number(text);
    return /^\d+$/.test(text) && n >= min && n <= max ? n : fail(name, `a whole number from ${min} to ${max}`, text);
  };

export const decimal =
  (min: number, max: number): Parse<number> =>
  (text, name) => {
    const n = Number(text);
    return Number.isFinite(n) && n >= min && n <= max ? n : fail(name, `a number from ${min} to ${max}`, text);
  };

export const boolean: Parse<boolean> = (text, name) => {
  if (/^(true|1|yes)$/i.test(text)) return true;
  if (/^(false|0|no)$/i.test(text)) return false;
  return fail(name, 'true or false', text);
};

/** The SDK reads only `true` and `1` as on; anything else would silently mean off. */
export const sdkBoolean: Parse<boolean> = (text, name) => {
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  return fail(name, 'true, false, 1 or 0', text);
};

export const duration =
  ({ allowZero = false } = {}): Parse<number> =>
  (text, name) => {
    const ms = text === '0' && allowZero ? 0 : parseDuration(text);
    // A whole number of milliseconds a timer (and a workflow input's validator) takes.
    return ms !== undefined && Number.isSafeInteger(ms) && (ms > 0 || allowZero)
      ? ms
      : fail(name, 'a duration such as 30s, 5m, 24h', text);
  };

/** A duration from minMs to maxMs (`0` allowed when minMs is 0); `range` says them as an operator writes them. */
export const durationWithin =
  (minMs: number, maxMs: number, range: string): Parse<number> =>
  (text, name) => {
    const ms = text === '0' ? 0 : parseDuration(text);
    return ms !== undefined && ms >= minMs && ms <= maxMs ? ms : fail(name, `a duration from ${range}`, text);
  };

export const durationList: Parse<number[]> = (text, name) => {
  const delays = text.split(',').map((part) => parseDuration(part));
  if (delays.some((d) => d === undefined || d <= 0)) {
    fail(name, 'comma-separated durations such as 5s,10s,20s,40s,60s', text);
  }
  return delays as number[];
};

export const size: Parse<number> = (text, name) => {
  const bytes = parseSize(text);
  return bytes !== undefined && bytes > 0 ? bytes : fail(name, 'a size such as 1048576, 8MiB or 5GiB', text);
};

export const httpUrl: Parse<string> = (text, name) => {
  try {
    const u = new URL(text);
    if (u.protocol === 'http:' || u.protocol === 'https:') return text.replace(/\/+$/, '');
  } catch {}
  return fail(name, 'an http(s) URL', text);
};

export const readableFile =
  (what: string): Parse<string> =>
  (path, name) => {
    try {
      accessSync(path, constants.R_OK);
      if (statSync(path).isFile()) return path;
    } catch {}
    return fail(name, `a readable file (${what})`, path);
  };

export const utcMinuteOfDay: Parse<number> = (text, name) => {
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(text);
  return m ? Number(m[1]) * 60 + Number(m[2]) : fail(name, 'a UTC time HH:MM', text);
};

/** host:port, [ipv6]:port; the SDK would otherwise report a bad address as "cannot reach". */
export const hostAndPort: Parse<string> = (text, name) => {
  const m = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$/.exec(text);
  const port = Number(m?.[1]);
  return m && port >= 1 && port <= 65535 ? text : fail(name, 'host:port, e.g. temporal.internal:7233', text);
};

export const anyText: Parse<string> = (text) => text;

/** An IP literal: the metrics exporter binds a socket address, so a host name would fail only at start. */
export const ipAddress: Parse<string> = (text, name) =>
  isIP(text) !== 0 ? text : fail(name, 'an IP address such as 0.0.0.0, 127.0.0.1 or ::', text);
