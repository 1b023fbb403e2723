/**
 * An executable model of how the production web ACL reads `Authorization`, built from the synthesized
 * template itself: the WellFormedBearerKey rule's pattern and transformations, and the RatePerKey
 * rule's aggregation key. Each transformation type is modelled as AWS WAF's developer guide
 * describes it ("Text transformation options"); a type the model does not know fails loudly.
 */
import { BEARER_KEY_RULE, FIREWALL_RULES } from '../../infra/constructs/firewall.ts';
import type { SynthesizedStack } from './synth.ts';
import { props } from './templates.ts';

interface Transformation {
  Priority: number;
  Type: string;
}

/** What each transformation does to a header value, per AWS WAF's documentation. */
const TRANSFORM: Record<string, (text: string) => string> = {
  NONE: (text) => text,
  // ASCII A-Z only.
  LOWERCASE: (text) => text.replace(/[A-Z]/g, (letter) => letter.toLowerCase()),
  // \f \t \n \r \v and the non-breaking space become spaces, then each run of spaces one space.
  COMPRESS_WHITE_SPACE: (text) => text.replace(/[\f\t\n\r\v\u00a0]/g, ' ').replace(/ {2,}/g, ' '),
};

const applied = (transformations: Transformation[], text: string): string =>
  [...transformations]
    .sort((a, b) => a.Priority - b.Priority)
    .reduce((out, { Type }) => {
      const transform = TRANSFORM[Type];
      if (!transform) throw new Error(`the WAF model does not know the ${Type} transformation`);
      return transform(out);
    }, text);

export interface AuthorizationRules {
  /** The transformations of the bearer-key rule's pattern match and of the rate per key, as the template has them. */
  readonly patternTransformations: Transformation[];
  readonly keyTransformations: Transformation[];
  /** Whether WellFormedBearerKey lets a request with this `Authorization` value through. */
  passes(value: string): boolean;
  /** The RatePerKey aggregation key of a request with this `Authorization` value: one counter per distinct key. */
  aggregationKey(value: string): string;
}

/** A stage's web ACL's reading of `Authorization`, from its synthesized template. */
export function authorizationRules(stack: SynthesizedStack): AuthorizationRules {
  const [, acl] = stack.ofType('AWS::WAFv2::WebACL')[0]!;
  const rules = props(acl).Rules as Record<string, any>[];
  const bearer = rules.find((rule) => rule.Name === BEARER_KEY_RULE)!;
  const perKey = rules.find((rule) => rule.Name === FIREWALL_RULES.ratePerKey)!;
  const match = bearer.Statement.AndStatement.Statements[0].NotStatement.Statement.RegexMatchStatement;
  const [key] = perKey.Statement.RateBasedStatement.CustomKeys;
  if (match.FieldToMatch.SingleHeader.Name !== 'authorization' || key.Header.Name !== 'authorization') {
    throw new Error('the rules no longer read the authorization header');
  }
  const pattern = new RegExp(match.RegexString as string);
  return {
    patternTransformations: match.TextTransformations,
    keyTransformations: key.Header.TextTransformations,
    passes: (value) => pattern.test(applied(match.TextTransformations, value)),
    aggregationKey: (value) => applied(key.Header.TextTransformations, value),
  };
}

/** The field value HTTP hands on: without the optional white space (SP, HTAB) around it (RFC 9110 5.5). */
export const fieldValue = (raw: string): string => raw.replace(/^[ \t]+|[ \t]+$/g, '');
