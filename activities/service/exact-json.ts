/**
 * JSON.parse that keeps int64 ids exact. The service's ids are int64 and a
 * JSON number above 2^53 loses digits in JSON.parse (9007199254740993 becomes
 * ...992), so an integer literal too large for a double is read as its decimal
 * string instead. Every other value parses as JSON.parse parses it. (Node 20's
 * JSON.parse has no access to a number's source text, hence the scan.)
 */
const SAFE_DIGITS = 15;

/** Like JSON.parse, but integers outside the safe range come back as decimal strings. */
export function parseJsonExact(text: string): unknown {
  return JSON.parse(quoteLargeIntegers(text));
}

function quoteLargeIntegers(text: string): string {
  let out = '';
  let copiedTo = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      i = endOfString(text, i);
      continue;
    }
    if (c === 0x2d /* - */ || isDigit(c)) {
      const start = i;
      i += 1;
      while (i < text.length && isDigit(text.charCodeAt(i))) i++;
      const isInteger = !/[.eE]/.test(text[i] ?? '');
      const literal = text.slice(start, i);
      if (isInteger && literal.replace('-', '').length > SAFE_DIGITS && !Number.isSafeInteger(Number(literal))) {
        out += `${text.slice(copiedTo, start)}"${literal}"`;
        copiedTo = i;
      }
      // A fraction or exponent is left to JSON.parse, as it was.
      while (i < text.length && /[0-9.eE+-]/.test(text[i] as string)) i++;
      continue;
    }
    i++;
  }
  return copiedTo === 0 ? text : out + text.slice(copiedTo);
}

/** The index just after the string literal that starts at `start`. */
function endOfString(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x5c /* \ */) i += 2;
    else if (c === 0x22) return i + 1;
    else i++;
  }
  return i;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}
