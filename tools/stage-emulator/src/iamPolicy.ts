/**
 * An IAM identity policy as a template writes it (AWS, "IAM JSON policy element reference"):
 * read from a function's role by ./iamGate.ts, evaluated and accounted for by ./grantUsage.ts.
 */

export interface PolicyStatement {
  Effect: 'Allow' | 'Deny';
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: string | string[];
  NotResource?: string | string[];
  Condition?: Record<string, Record<string, string | string[]>>;
  Sid?: string;
}

export interface PolicyDocument {
  Version?: string;
  Statement: PolicyStatement | PolicyStatement[];
}
