/**
 * The Velocity (VTL) context API Gateway gives mapping templates (`$context`, `$input`, `$util`,
 * `$stageVariables`), rendered by a real Velocity engine (velocityjs).
 *
 * As in API Gateway, a reference to something that does not exist renders as nothing (never as its
 * own `$name` text, which is what plain Velocity does).
 */
import { Compile, parse } from 'velocityjs';

/** The request (or integration response) a template reads through `$input`. */
export interface TemplateInput {
  body: string;
  /** Path, query string and header parameters of the method request, single-valued. */
  params: { path: Record<string, string>; querystring: Record<string, string>; header: Record<string, string> };
}

export interface TemplateVariables {
  context: Record<string, unknown>;
  input: TemplateInput;
  stageVariables: Record<string, string> | null;
}

export function renderTemplate(template: string, variables: TemplateVariables): string {
  const compiled = new Compile(parse(template));
  return compiled.render(
    {
      context: variables.context,
      input: inputVariable(variables.input),
      util: utilVariable,
      stageVariables: variables.stageVariables ?? {},
    },
    undefined,
    true,
  );
}

function inputVariable({ body, params }: TemplateInput) {
  return {
    body,
    params(name?: string): unknown {
      if (name === undefined) return params;
      return params.path[name] ?? params.querystring[name] ?? headerValue(params.header, name) ?? '';
    },
    /** The JSON text at a JSONPath of the body. */
    json(path: string): string {
      const value = valueAt(parseBody(body), path);
      return value === undefined ? '' : JSON.stringify(value);
    },
    /** The value at a JSONPath of the body, as an object the template can walk. */
    path(path: string): unknown {
      return valueAt(parseBody(body), path);
    },
  };
}

const utilVariable = {
  escapeJavaScript: escapeJavaScript,
  parseJson: (text: string): unknown => JSON.parse(text),
  // Java's URLEncoder (form encoding): space as `+`, and only `-_.*` left as they are.
  urlEncode: (text: string): string =>
    encodeURIComponent(text)
      .replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
      .replace(/%20/g, '+'),
  urlDecode: (text: string): string => decodeURIComponent(text.replace(/\+/g, ' ')),
  base64Encode: (text: string): string => Buffer.from(text, 'utf8').toString('base64'),
  base64Decode: (text: string): string => Buffer.from(text, 'base64').toString('utf8'),
};

/** JavaScript string escaping as Apache Commons' `escapeJavaScript` does it (API Gateway's `$util`). */
export function escapeJavaScript(text: string): string {
  const named: Record<string, string> = {
    '"': '\\"',
    "'": "\\'",
    '\\': '\\\\',
    '/': '\\/',
    '\b': '\\b',
    '\f': '\\f',
    '\n': '\\n',
    '\r': '\\r',
    '\t': '\\t',
  };
  let escaped = '';
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (named[char]) escaped += named[char];
    else if (code < 0x20 || code > 0x7e)
      escaped += [...utf16Units(char)].map((unit) => `\\u${unit.toString(16).toUpperCase().padStart(4, '0')}`).join('');
    else escaped += char;
  }
  return escaped;
}

function* utf16Units(char: string): Generator<number> {
  for (let i = 0; i < char.length; i++) yield char.charCodeAt(i);
}

function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const lower = name.toLowerCase();
  return Object.entries(headers).find(([key]) => key.toLowerCase() === lower)?.[1];
}

function parseBody(body: string): unknown {
  if (body === '') return {};
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}

/**
 * The value at a JSONPath made of names and indexes (`$`, `$.a.b`, `$['a'][0]`): the subset mapping
 * templates use. Anything else (filters, wildcards, recursion) is refused rather than guessed.
 */
export function valueAt(root: unknown, path: string): unknown {
  if (!path.startsWith('$')) throw new Error(`unsupported JSONPath ${path}`);
  const step = /^(?:\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\])/;
  let rest = path.slice(1);
  let value = root;
  while (rest.length > 0) {
    const match = step.exec(rest);
    if (!match) throw new Error(`unsupported JSONPath ${path}`);
    const key = match[1] ?? match[3] ?? match[4];
    const index = match[2];
    if (value === null || typeof value !== 'object') return undefined;
    value =
      key !== undefined
        ? Object.hasOwn(value, key)
          ? (value as Record<string, unknown>)[key]
          : undefined
        : (value as unknown[])[Number(index)];
    rest = rest.slice(match[0].length);
  }
  return value;
}
