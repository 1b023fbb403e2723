/**
 * The logical ids the stack had before it was split into constructs (infra/constructs/idTransparentGroup.ts).
 * A changed id is a replaced resource: a new, empty table, a new API at a new URL. Only the API
 * deployment (whose id hashes its content) and the Lambda permissions (which follow their target)
 * may change. API Gateway's account setting and its CloudWatch role left the stage stacks for the
 * account stack (infra/accountStack.ts). (The cursor secret is gone on purpose: it moved to the control table. So is the
 * REQUEST_TOO_LARGE gateway response: API Gateway does not let an API customize its 413.)
 */
import { describe, expect, it } from 'vitest';
import { CfnResource } from 'aws-cdk-lib';
import { STAGES } from '../../infra/stages.ts';
import { synthesize, testApp } from './synth.ts';

const BEFORE_THE_SPLIT: Readonly<Record<string, string>> = {
  ApiANY40671C4F: 'AWS::ApiGateway::Method',
  ApiAccessLogsE9DF007D: 'AWS::Logs::LogGroup',
  ApiDeploymentStagev102147F91: 'AWS::ApiGateway::Stage',
  ApiF70053CD: 'AWS::ApiGateway::RestApi',
  ApiGatewayBadRequestBody076BF6D0: 'AWS::ApiGateway::GatewayResponse',
  ApiGatewayBadRequestParametersC754763F: 'AWS::ApiGateway::GatewayResponse',
  ApiGatewayDefault4xxEEC85551: 'AWS::ApiGateway::GatewayResponse',
  ApiGatewayDefault5xx79EE9F9D: 'AWS::ApiGateway::GatewayResponse',
  ApiGatewayIntegrationFailure571798F7: 'AWS::ApiGateway::GatewayResponse',
  ApiGatewayIntegrationTimeoutBA49537C: 'AWS::ApiGateway::GatewayResponse',
  ApiGatewayMissingAuthenticationToken889FE9AD: 'AWS::ApiGateway::GatewayResponse',
  ApiGatewayQuotaExceeded7935E390: 'AWS::ApiGateway::GatewayResponse',
  ApiGatewayResourceNotFound8E1194CC: 'AWS::ApiGateway::GatewayResponse',
  ApiGatewayThrottled6FC2D91F: 'AWS::ApiGateway::GatewayResponse',
  ApiGatewayUnsupportedMediaType776C1B84: 'AWS::ApiGateway::GatewayResponse',
  ApipetsA28220F6: 'AWS::ApiGateway::Resource',
  ApipetsANYCF22C80B: 'AWS::ApiGateway::Method',
  ApipetsGET53ECABE7: 'AWS::ApiGateway::Method',
  ApipetsPOST53F750AF: 'AWS::ApiGateway::Method',
  ApipetspetIdANYBD736710: 'AWS::ApiGateway::Method',
  ApipetspetIdBC8AB3F3: 'AWS::ApiGateway::Resource',
  ApipetspetIdGET0AF3B144: 'AWS::ApiGateway::Method',
  Apiproxy05443892: 'AWS::ApiGateway::Resource',
  ApiproxyANY4946669B: 'AWS::ApiGateway::Method',
  ControlTableF3E1E223: 'AWS::DynamoDB::Table',
  CreatePetDocumentation: 'AWS::ApiGateway::DocumentationPart',
  CreatePetFunctionA9DECA71: 'AWS::Lambda::Function',
  CreatePetLogs05953A9A: 'AWS::Logs::LogGroup',
  CreatePetRoleEB2C946C: 'AWS::IAM::Role',
  GetPetDocumentation: 'AWS::ApiGateway::DocumentationPart',
  GetPetFunctionEBD1B0B7: 'AWS::Lambda::Function',
  GetPetLogs4F231AC3: 'AWS::Logs::LogGroup',
  GetPetRole83CBBBC5: 'AWS::IAM::Role',
  ListPetsDocumentation: 'AWS::ApiGateway::DocumentationPart',
  ListPetsFunction7A3F240D: 'AWS::Lambda::Function',
  ListPetsLogs912AF886: 'AWS::Logs::LogGroup',
  ListPetsRoleECF812AE: 'AWS::IAM::Role',
  PetsTable56B0D675: 'AWS::DynamoDB::Table',
};

describe.each(STAGES)('PetStore-%s logical ids', (stage) => {
  const { stacks } = testApp({ stages: [stage] });
  const stack = stacks.get(stage)!;
  const { json } = synthesize(stack);

  it('are the ones every resource had before the split, with the same type', () => {
    const types = Object.fromEntries(Object.entries(json.Resources).map(([id, resource]) => [id, resource.Type]));
    expect(types).toMatchObject(BEFORE_THE_SPLIT);
  });

  it('are unique: one resource in the template for every resource in the construct tree', () => {
    const resources = stack.node.findAll().filter((construct) => CfnResource.isCfnResource(construct));
    expect(Object.keys(json.Resources)).toHaveLength(resources.length);
  });
});
