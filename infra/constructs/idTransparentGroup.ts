/**
 * The stack is composed of constructs, one part of the stage each (tables, functions, API,
 * monitoring, deployment). They organise the source, not the deployed resources: an
 * `IdTransparentGroup` is left out of its children's logical ids, because a changed logical id is
 * a replaced resource: a new, empty table (the old one retained, orphaned) or a new API with a new
 * URL. test/infra/logicalIds.test.ts pins the ids.
 */
import type { Stack, CfnElement } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { createHash } from 'node:crypto';

/** A construct that groups one part of the stack and is left out of its children's logical ids. */
export class IdTransparentGroup extends Construct {}

/**
 * CDK's logical id (`makeUniqueId`, which aws-cdk-lib does not export) of `element` with every
 * `IdTransparentGroup` left out of its path.
 */
export function logicalIdWithoutGroups(stack: Stack, element: CfnElement): string {
  const scopes = element.node.scopes;
  const components = scopes
    .slice(scopes.indexOf(stack) + 1)
    .filter((scope) => !(scope instanceof IdTransparentGroup))
    .map((scope) => scope.node.id);
  return uniqueId(components);
}

// Kept exactly as aws-cdk-lib/core/lib/private/uniqueid.js computes it.
const HIDDEN_ID = 'Default';
const HIDDEN_FROM_HUMAN_ID = 'Resource';
const MAX_HUMAN_LEN = 240;
const MAX_ID_LEN = 255;

function uniqueId(path: readonly string[]): string {
  const components = path.filter((component) => component !== HIDDEN_ID);
  if (components.length === 0) throw new Error('Unable to calculate a logical id for an empty path');
  if (components.length === 1) {
    const candidate = alphanumeric(components[0]!);
    if (candidate.length <= MAX_ID_LEN) return candidate;
  }
  const hash = createHash('md5').update(components.join('/')).digest('hex').slice(0, 8).toUpperCase();
  const human = withoutRepeats(components)
    .filter((component) => component !== HIDDEN_FROM_HUMAN_ID)
    .map(alphanumeric)
    .join('')
    .slice(0, MAX_HUMAN_LEN);
  return human + hash;
}

const alphanumeric = (s: string): string => s.replace(/[^A-Za-z0-9]/g, '');

function withoutRepeats(path: readonly string[]): string[] {
  const kept: string[] = [];
  for (const component of path)
    if (kept.length === 0 || !kept[kept.length - 1]!.endsWith(component)) kept.push(component);
  return kept;
}
