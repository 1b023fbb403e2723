/**
 * Publishes the OpenAPI document's prose into API Gateway's documentation, so the export of a stage
 * (`aws apigateway get-export --export-type oas30 --parameters extensions='documentation'`) describes
 * the API as openapi.json does. The METHOD parts come from PetStoreStack; this adds the API part and
 * one RESPONSE part per declared status, then snapshots them all as a documentation version that the
 * stage is tied to. The version name carries a digest of openapi.json, so any change publishes anew.
 */
import { Stack } from 'aws-cdk-lib';
import { CfnDocumentationPart, CfnDocumentationVersion, type CfnStage, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { createHash } from 'node:crypto';
import { INTERFACE_VERSION, openApiDocument, openApiText } from '../contract/openapi.ts';

interface DocumentOperation {
  operationId: string;
  responses: Record<string, { description: string }>;
}

/** `1.0.0-<first 12 hex of the document's SHA-256>`: a new version whenever the document changes. */
export const documentationVersionName = (): string =>
  `${INTERFACE_VERSION}-${createHash('sha256').update(openApiText()).digest('hex').slice(0, 12)}`;

export function publishDocumentation(api: RestApi): CfnDocumentationVersion {
  const document = openApiDocument() as {
    info: Record<string, unknown>;
    paths: Record<string, Record<string, DocumentOperation>>;
  };
  const scope = Stack.of(api);
  new CfnDocumentationPart(scope, 'ApiDocumentation', {
    restApiId: api.restApiId,
    location: { type: 'API' },
    properties: JSON.stringify({ info: document.info }),
  });
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        new CfnDocumentationPart(scope, `${operation.operationId}${status}Documentation`, {
          restApiId: api.restApiId,
          location: { type: 'RESPONSE', path, method: method.toUpperCase(), statusCode: status },
          properties: JSON.stringify({ description: response.description }),
        });
      }
    }
  }
  const version = new CfnDocumentationVersion(scope, 'DocumentationVersion', {
    restApiId: api.restApiId,
    documentationVersion: documentationVersionName(),
    description: `openapi.json of interface version ${INTERFACE_VERSION}`,
  });
  // The snapshot must hold every part, the stack's METHOD parts included.
  for (const part of scope.node.findAll().filter((c) => c instanceof CfnDocumentationPart))
    version.node.addDependency(part);
  const stage = api.deploymentStage.node.defaultChild as CfnStage;
  stage.documentationVersion = version.documentationVersion;
  stage.node.addDependency(version);
  return version;
}
