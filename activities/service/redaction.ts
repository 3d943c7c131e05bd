/**
 * Removes secrets (the bearer token, the client secret) from text a service
 * or a socket error produced, before that text becomes part of an error.
 *
 * A service that echoes a secret rarely echoes it verbatim: a JSON body may
 * escape it (`\/`, `\u002b`), a gateway may echo the request URL-encoded
 * (`%2F`), an XML or HTML page may use character references (`&#x2F;`), and
 * an echoed header may be base64-encoded. Every such spelling is found, also
 * mixed within one secret, so that what a JSON or XML parser decodes later is
 * already free of it.
 */
const REDACTED = '[redacted]';

/** Shorter secrets are not searched for in base64: their encoded core would be too short to be theirs alone. */
const MIN_BASE64_SECRET_CHARS = 8;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Every spelling of one character: itself, %XX, \uXXXX, \c, &#NN;, &#xNN; and the XML named references. */
function characterPattern(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  const hex = code.toString(16);
  const named: Record<string, string> = { '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": 'apos' };
  const spellings = [
    escapeRegExp(ch),
    `%${hex.padStart(2, '0')}`,
    `\\\\u${hex.padStart(4, '0')}`,
    `\\\\${escapeRegExp(ch)}`,
    `&#0*${code};`,
    `&#x0*${hex};`,
  ];
  if (named[ch]) spellings.push(`&${named[ch]};`);
  return `(?:${spellings.join('|')})`;
}

/** The part of base64(prefix + secret) that depends on the secret alone, for each of the three alignments. */
function base64Cores(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const cores: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const first = Math.ceil((offset * 8) / 6);
    const last = Math.floor(((offset + bytes.length) * 8) / 6);
    const core = encoded.slice(first, last);
    cores.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return cores;
}

function secretPattern(secret: string): string {
  const spelled = [...secret].map(characterPattern).join('');
  if (secret.length < MIN_BASE64_SECRET_CHARS) return spelled;
  return [spelled, ...base64Cores(secret).map(escapeRegExp)].join('|');
}

/** `text` with every spelling of every non-empty secret replaced by [redacted]. */
export function redact(text: string, secrets: readonly string[]): string {
  const present = secrets.filter((s) => s !== '');
  if (present.length === 0 || text === '') return text;
  const pattern = new RegExp(present.map(secretPattern).join('|'), 'gi');
  return text.replace(pattern, REDACTED);
}
