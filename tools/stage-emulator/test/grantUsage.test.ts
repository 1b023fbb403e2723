/** The IAM report's one line per function (tools/stage-emulator/src/grantUsage.ts iamReportLines). */
import { expect, it } from 'vitest';
import { iamReportLines, type FunctionIamReport, type GrantReport } from '../src/grantUsage.ts';

const getItem: GrantReport = {
  grant: 'dynamodb:GetItem on PetsTable (Table)',
  action: 'dynamodb:GetItem',
  resource: 'arn:aws:dynamodb:us-east-1:123456789012:table/pets',
  used: false,
  source: 'infra/constructs/permissions.ts:94',
};

function reportFor(allowed: number, denied: number, grants: GrantReport[]): FunctionIamReport {
  return {
    function: 'GetPetFunction',
    role: 'GetPetRole',
    writtenIn: 'infra/constructs/functions.ts',
    allowed,
    denied,
    unusedGrants: [],
    grants,
  };
}

it('counts calls in the grammatical number: 1 call, 0 and 2 calls', () => {
  const lines = iamReportLines({
    stack: 'PetStore-staging',
    functions: [reportFor(1, 0, [{ ...getItem, used: true }]), reportFor(0, 1, [getItem]), reportFor(2, 0, [])],
  });
  expect(lines).toEqual([
    'IAM GetPetFunction: 1 call allowed, 0 denied; unused grants: none',
    'IAM GetPetFunction: 0 calls allowed, 1 denied; unused grants: dynamodb:GetItem on PetsTable (Table) at infra/constructs/permissions.ts:94',
    'IAM GetPetFunction: 2 calls allowed, 0 denied; unused grants: none',
  ]);
});
