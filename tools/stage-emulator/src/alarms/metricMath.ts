/**
 * The metric math the alarms use, per period: numbers, query ids, + - * / (and unary minus) and
 * parentheses. Anything else (a function such as FILL or ANOMALY_DETECTION_BAND, a Metrics Insights
 * SELECT, ^, comparisons) is refused with a MathSyntaxError naming what it met.
 *
 * Missing data, as "Using metric math" documents the arithmetic operators: "Missing values in a time
 * series are treated as 0", and a data point whose computation divides by zero is dropped. So in one
 * period an expression has a value when at least one series it reads has one, each series without a
 * value counting 0; when none has one, the period has no data point (`rate * 100` with no request).
 */

export type MathNode =
  | { readonly kind: 'number'; readonly value: number }
  | { readonly kind: 'id'; readonly id: string }
  | { readonly kind: 'negate'; readonly operand: MathNode }
  | {
      readonly kind: 'binary';
      readonly operator: '+' | '-' | '*' | '/';
      readonly left: MathNode;
      readonly right: MathNode;
    };

/** An expression the evaluator cannot read; the message names the expression and what stops it. */
export class MathSyntaxError extends Error {
  override name = 'MathSyntaxError';
}

type Token =
  | { kind: 'number'; value: number; at: number }
  | { kind: 'id'; id: string; at: number }
  | { kind: 'operator'; operator: '+' | '-' | '*' | '/' | '(' | ')'; at: number };

/** Ids start with a lowercase letter (CloudWatch's rule); FUNCTIONS are upper case. */
const TOKEN = /\s*(?:(\d+(?:\.\d+)?)|([a-z][A-Za-z0-9_]*)|([-+*/()])|([A-Z][A-Za-z0-9_]*)|(\S))/y;

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < expression.length) {
    const at = TOKEN.lastIndex;
    const match = TOKEN.exec(expression);
    if (!match) break; // only trailing white space is left
    const [, number, id, operator, upper, other] = match;
    if (number !== undefined) tokens.push({ kind: 'number', value: Number(number), at });
    else if (id !== undefined) tokens.push({ kind: 'id', id, at });
    else if (operator !== undefined) tokens.push({ kind: 'operator', operator: operator as '+', at });
    else if (upper !== undefined)
      throw new MathSyntaxError(
        `"${expression}" uses ${upper}, which the offline evaluator does not implement (it reads + - * /, parentheses, numbers and ids).`,
      );
    else
      throw new MathSyntaxError(`"${expression}" has "${other}" at ${at}, which the offline evaluator does not read.`);
  }
  return tokens;
}

/** Parses `expression` (precedence: unary minus, then * /, then + -; left to right). */
export function parseExpression(expression: string): MathNode {
  const tokens = tokenize(expression);
  let position = 0;
  const fail = (what: string): never => {
    throw new MathSyntaxError(`"${expression}" is not an expression the offline evaluator reads: ${what}.`);
  };
  const peek = () => tokens[position];
  const isOperator = (...operators: string[]) => {
    const token = peek();
    return token?.kind === 'operator' && operators.includes(token.operator);
  };
  const primary = (): MathNode => {
    const token = tokens[position++];
    if (!token) return fail('it ends where a value was expected');
    if (token.kind === 'number') return { kind: 'number', value: token.value };
    if (token.kind === 'id') return { kind: 'id', id: token.id };
    if (token.operator === '-') return { kind: 'negate', operand: primary() };
    if (token.operator !== '(') return fail(`"${token.operator}" at ${token.at} where a value was expected`);
    const inner = sum();
    if (!isOperator(')')) fail(`a "(" is not closed`);
    position++;
    return inner;
  };
  const product = (): MathNode => {
    let node = primary();
    while (isOperator('*', '/')) {
      const operator = (tokens[position++] as { operator: '*' | '/' }).operator;
      node = { kind: 'binary', operator, left: node, right: primary() };
    }
    return node;
  };
  const sum = (): MathNode => {
    let node = product();
    while (isOperator('+', '-')) {
      const operator = (tokens[position++] as { operator: '+' | '-' }).operator;
      node = { kind: 'binary', operator, left: node, right: product() };
    }
    return node;
  };
  const root = sum();
  const rest = peek();
  if (rest) fail(`unexpected ${rest.kind === 'operator' ? `"${rest.operator}"` : 'value'} at ${rest.at}`);
  if (referencedIds(root).length === 0) fail('it reads no metric, so it is not a time series');
  return root;
}

/** The ids an expression reads, each once, in order of appearance. */
export function referencedIds(node: MathNode): string[] {
  switch (node.kind) {
    case 'number':
      return [];
    case 'id':
      return [node.id];
    case 'negate':
      return referencedIds(node.operand);
    case 'binary':
      return [...new Set([...referencedIds(node.left), ...referencedIds(node.right)])];
  }
}

/**
 * The expression's value in one period, given each id's value there (undefined: no data point).
 * Undefined when no id has a value, or when the computation divides by zero (the point is dropped).
 */
export function evaluateExpression(node: MathNode, valueOfId: (id: string) => number | undefined): number | undefined {
  const values = new Map(referencedIds(node).map((id) => [id, valueOfId(id)]));
  if ([...values.values()].every((value) => value === undefined)) return undefined;
  const result = compute(node, (id) => values.get(id) ?? 0);
  return Number.isFinite(result) ? result : undefined;
}

function compute(node: MathNode, valueOfId: (id: string) => number): number {
  switch (node.kind) {
    case 'number':
      return node.value;
    case 'id':
      return valueOfId(node.id);
    case 'negate':
      return -compute(node.operand, valueOfId);
    case 'binary': {
      const left = compute(node.left, valueOfId);
      const right = compute(node.right, valueOfId);
      if (node.operator === '+') return left + right;
      if (node.operator === '-') return left - right;
      if (node.operator === '*') return left * right;
      return right === 0 ? Number.NaN : left / right;
    }
  }
}
