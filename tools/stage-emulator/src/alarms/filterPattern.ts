/**
 * CloudWatch Logs filter patterns, evaluated the way CloudWatch documents them ("Filter pattern
 * syntax for metric filters"), for the patterns our templates hold: JSON patterns `{ ... }` of
 * `$.field = "string"` (a `*` anywhere in the string matches any run of characters), `!=`, numbers,
 * `IS TRUE` / `IS FALSE` / `IS NULL`, `NOT EXISTS`, joined by `&&` and `||` with parentheses; and
 * term patterns (a quoted phrase, or words, all of which must appear). Anything else throws: a test
 * never passes on a pattern it cannot read.
 *
 * A log event of a Lambda function in the text log format is `<time>\t<request id>\t<LEVEL>\t<message>`
 * as the Node.js runtime writes console output. A JSON pattern is evaluated on the JSON object of
 * the message: the object our log lines are (lib/domain/log.ts). That is how the stage's filters on
 * function logs are meant to read them; `aws logs test-metric-filter` on a real line confirms it on AWS
 * (docs/operating.md, "Alarms", says how).
 */

type Json = unknown;

/** Whether `pattern` matches the log event `event`. */
export function matchesFilterPattern(pattern: string, event: string): boolean {
  const trimmed = pattern.trim();
  if (trimmed.startsWith('{')) {
    if (!trimmed.endsWith('}')) throw new Error(`not a JSON filter pattern: ${pattern}`);
    const json = jsonOf(event);
    return json !== undefined && new Parser(trimmed.slice(1, -1)).parseAll()(json);
  }
  return termsMatch(trimmed, event);
}

/** The JSON object of an event: the whole event, or the message after Lambda's text-format prefix. */
export function jsonOf(event: string): Json | undefined {
  for (const candidate of [event, event.split('\t').slice(3).join('\t')]) {
    try {
      const parsed = JSON.parse(candidate) as Json;
      if (parsed !== null && typeof parsed === 'object') return parsed;
    } catch {
      // not JSON: try the next reading
    }
  }
  return undefined;
}

function termsMatch(pattern: string, event: string): boolean {
  const quoted = /^"(.*)"$/.exec(pattern);
  if (quoted) return event.includes(quoted[1]!.replace(/\\"/g, '"'));
  if (/["{}[\]]/.test(pattern)) throw new Error(`unsupported term pattern: ${pattern}`);
  return pattern
    .split(/\s+/)
    .every((term) => (term.startsWith('-') ? !event.includes(term.slice(1)) : event.includes(term)));
}

type Test = (json: Json) => boolean;

/** A recursive-descent parser of the JSON pattern's expression into a test. */
class Parser {
  #at = 0;
  constructor(readonly text: string) {}

  parseAll(): Test {
    const test = this.#or();
    this.#space();
    if (this.#at !== this.text.length) throw new Error(`unexpected "${this.text.slice(this.#at)}" in { ${this.text} }`);
    return test;
  }

  #or(): Test {
    const tests = [this.#and()];
    while (this.#eat('||')) tests.push(this.#and());
    return (json) => tests.some((test) => test(json));
  }

  #and(): Test {
    const tests = [this.#primary()];
    while (this.#eat('&&')) tests.push(this.#primary());
    return (json) => tests.every((test) => test(json));
  }

  #primary(): Test {
    if (this.#eat('(')) {
      const test = this.#or();
      if (!this.#eat(')')) throw new Error(`missing ) in { ${this.text} }`);
      return test;
    }
    return this.#comparison();
  }

  #comparison(): Test {
    this.#space();
    const selector = /^\$(\.[A-Za-z_][A-Za-z0-9_]*)+/.exec(this.text.slice(this.#at))?.[0];
    if (!selector) throw new Error(`expected a selector at "${this.text.slice(this.#at)}"`);
    this.#at += selector.length;
    const path = selector.slice(2).split('.');
    const read = (json: Json) =>
      path.reduce<Json>(
        (value, key) => (value && typeof value === 'object' ? (value as Record<string, Json>)[key] : undefined),
        json,
      );
    if (this.#eat('IS TRUE')) return (json) => read(json) === true;
    if (this.#eat('IS FALSE')) return (json) => read(json) === false;
    if (this.#eat('IS NULL')) return (json) => read(json) === null;
    if (this.#eat('NOT EXISTS')) return (json) => read(json) === undefined;
    const negated = this.#eat('!=');
    if (!negated && !this.#eat('=')) throw new Error(`expected = or != after ${selector}`);
    const expected = this.#value();
    return (json) => {
      const value = read(json);
      const equal =
        typeof expected === 'number' ? value === expected : typeof value === 'string' && wildcard(expected).test(value);
      return negated ? value !== undefined && !equal : equal;
    };
  }

  #value(): string | number {
    this.#space();
    const rest = this.text.slice(this.#at);
    const quoted = /^"((?:[^"\\]|\\.)*)"/.exec(rest);
    if (quoted) {
      this.#at += quoted[0].length;
      return quoted[1]!.replace(/\\(.)/g, '$1');
    }
    const number = /^-?\d+(\.\d+)?/.exec(rest);
    if (number) {
      this.#at += number[0].length;
      return Number(number[0]);
    }
    throw new Error(`expected a value at "${rest}"`);
  }

  #eat(token: string): boolean {
    this.#space();
    if (!this.text.startsWith(token, this.#at)) return false;
    this.#at += token.length;
    return true;
  }

  #space(): void {
    while (this.text[this.#at] === ' ') this.#at++;
  }
}

/** A pattern string's wildcards as a whole-string regular expression. */
const wildcard = (expected: string): RegExp =>
  new RegExp(
    `^${expected
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    's',
  );
