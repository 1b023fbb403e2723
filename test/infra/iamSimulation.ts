/**
 * IAM's own evaluation (@cloud-copilot/iam-simulate) of this repository's policies against calls, for
 * the policy tests: the deployer's and key operator's (infra/policies/) and each stack's bootstrap
 * policies (tools/policies/executionPolicy.ts), filled as `npm run policy` fills them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { expect } from 'vitest';
import { PROJECT_ROOT } from '../../infra/bundle/bundling.ts';
import { fillPolicy, type Placeholder } from '../../tools/policies/fill.ts';

export const ACCOUNT = '123456789012';
export const REGION = 'us-east-1';
export const USAGE_PLAN_ID = 'plan42';

export interface Policy {
  Statement: { Sid: string; Action: string | string[]; Resource: string | string[]; Condition?: unknown }[];
}

/** A policy's text filled for the test account and Region (and stage, usage plan). */
export const filled = (text: string, values: Partial<Record<Placeholder, string>> = {}): Policy =>
  JSON.parse(
    fillPolicy(text, { account: ACCOUNT, region: REGION, 'usage-plan-id': USAGE_PLAN_ID, ...values }),
  ) as Policy;

/** A policy file of infra/policies/, filled. */
export const policyFile = (name: string, values: Partial<Record<Placeholder, string>> = {}): Policy =>
  filled(readFileSync(join(PROJECT_ROOT, 'infra', 'policies', name), 'utf8'), values);

export interface Call {
  action: string;
  resource: string;
  context?: Record<string, string | string[]>;
}

export interface Principal {
  identity: Policy[];
  boundary?: Policy;
}

async function decide(principal: Principal, { action, resource, context = {} }: Call): Promise<string> {
  const result = await runSimulation(
    {
      request: {
        principal: `arn:aws:iam::${ACCOUNT}:role/someone`,
        action,
        resource: { resource, accountId: ACCOUNT },
        contextVariables: context,
      },
      identityPolicies: principal.identity.map((policy, i) => ({ name: `policy${i}`, policy: policy as never })),
      ...(principal.boundary
        ? { permissionBoundaryPolicies: [{ name: 'boundary', policy: principal.boundary as never }] }
        : {}),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    {},
  );
  if (result.resultType === 'error') throw new Error(`${action} on ${resource}: ${JSON.stringify(result.errors)}`);
  return result.overallResult;
}

const describeCall = ({ action, resource, context }: Call) =>
  `${action} on ${resource}${context ? ` ${JSON.stringify(context)}` : ''}`;

/** Every call decided `verdict` (a denial is implicit or explicit); the test names those that are not. */
export async function expectAll(principal: Principal, calls: Call[], verdict: 'Allowed' | 'Denied'): Promise<void> {
  expect(calls.length).toBeGreaterThan(0);
  const decided = await Promise.all(
    calls.map(async (call) => [describeCall(call), await decide(principal, call)] as const),
  );
  const wrong = decided.filter(([, result]) => (verdict === 'Allowed' ? result !== 'Allowed' : result === 'Allowed'));
  expect(wrong.map(([call, result]) => `${result}: ${call}`)).toEqual([]);
}
