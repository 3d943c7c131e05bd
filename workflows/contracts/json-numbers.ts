/**
 * JSON numbers above 2^53 are rounded by JSON.parse, so an int64 id written
 * as a number silently names another id. Node 20 cannot hand a reviver the
 * number's source text, so this finds the user's own digits in the text
 * instead, to show them in the error that refuses the rounded value.
 */

/** Every number literal of a JSON text, in order, skipping the insides of strings. */
function numberLiterals(text: string): string[] {
  const literals: string[] = [];
  const token = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;
  for (const match of text.matchAll(token)) {
    if (!match[0].startsWith('"')) literals.push(match[0]);
  }
  return literals;
}

/** The literal as written in `text` that JSON.parse turned into the unsafe integer `value`, if any. */
export function integerLiteralFor(text: string, value: number): string | undefined {
  return numberLiterals(text).find((literal) => /^-?\d+$/.test(literal) && Number(literal) === value);
}
