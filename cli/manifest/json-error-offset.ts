/**
 * Where JSON text stops being JSON: the offset of the first character a JSON parser rejects.
 * JSON.parse says so itself only in newer Node versions (`at position N`); Node 20 names the
 * token alone, so `inject` finds the place here to report `FILE:LINE:COL` on every version.
 */

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/;
// eslint-disable-next-line no-control-regex -- JSON strings may not hold control characters
const STRING = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/;

/** Unwinds the descent to the offset where the text stops being JSON. */
class Stop extends Error {
  constructor(readonly offset: number) {
    super(`not JSON at ${offset}`);
  }
}

/** The offset of the first error in `text`, or undefined when it is valid JSON. */
export function jsonErrorOffset(text: string): number | undefined {
  let i = 0;
  const skip = (): void => {
    while (i < text.length && WHITESPACE.has(text[i] ?? '')) i++;
  };
  const expect = (char: string): void => {
    skip();
    if (text[i] !== char) throw new Stop(i);
    i++;
  };
  const value = (): void => {
    skip();
    const c = text[i];
    if (c === '{') {
      i++;
      skip();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        skip();
        string();
        expect(':');
        value();
        skip();
        if (text[i] === ',') i++;
        else return expect('}');
      }
    }
    if (c === '[') {
      i++;
      skip();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        skip();
        if (text[i] === ',') i++;
        else return expect(']');
      }
    }
    if (c === '"') return string();
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return;
      }
    }
    const number = NUMBER.exec(text.slice(i, i + 400))?.[0];
    if (number === undefined) throw new Stop(i);
    i += number.length;
  };
  const string = (): void => {
    const match = text[i] === '"' ? STRING.exec(text.slice(i)) : null;
    if (match === null) throw new Stop(i);
    i += match[0].length;
  };
  try {
    value();
    skip();
    return i < text.length ? i : undefined;
  } catch (error) {
    if (error instanceof Stop) return error.offset;
    throw error;
  }
}
