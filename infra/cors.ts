/**
 * CORS on AWS, from the stage's `corsAllowedOrigins` (none by default): the functions get the list
 * in `CORS_ALLOWED_ORIGINS` (lib/http/cors.ts adds the headers to their answers), and each route resource
 * gets an OPTIONS preflight answered by API Gateway itself. With no origins, nothing is added: OPTIONS
 * stays with the resource's ANY mock (405) as before.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import type { CfnMethod, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { CORS_ALLOW_HEADERS, CORS_MAX_AGE_SECONDS, CORS_ORIGINS_VARIABLE } from '../lib/http/cors.ts';
import { resourcePaths, routes } from '../lib/domain/routes.ts';
import { HARDENING_HEADERS } from '../lib/http/responses.ts';

export const corsEnvironment = (origins: readonly string[]): Record<string, string> =>
  origins.length ? { [CORS_ORIGINS_VARIABLE]: origins.join(',') } : {};

export function addCorsPreflight(api: RestApi, origins: readonly string[]): void {
  if (origins.length === 0) return;
  for (const [path, allow] of resourcePaths(routes)) {
    const method = api.root.resourceForPath(path).addCorsPreflight({
      allowOrigins: [...origins],
      allowMethods: [...allow],
      allowHeaders: [...CORS_ALLOW_HEADERS],
      maxAge: Duration.seconds(CORS_MAX_AGE_SECONDS),
      statusCode: 204,
    });
    hardenPreflight(method.node.defaultChild as CfnMethod);
    const reason = 'A CORS preflight carries no credentials by design; the mock answers it and runs no code.';
    Validations.of(method).acknowledge({ id: 'AwsSolutions-APIG4', reason });
    Validations.of(method).acknowledge({ id: 'AwsSolutions-COG4', reason });
  }
}

/**
 * The preflight answers with the headers of every answer too (lib/http/responses.ts HARDENING_HEADERS):
 * `addCorsPreflight` takes no other header, so they are added to its one response (dots in the
 * header parameter names escaped for the override path).
 */
function hardenPreflight(method: CfnMethod): void {
  for (const [name, value] of Object.entries(HARDENING_HEADERS)) {
    const parameter = `method\\.response\\.header\\.${name}`;
    method.addPropertyOverride(`Integration.IntegrationResponses.0.ResponseParameters.${parameter}`, `'${value}'`);
    method.addPropertyOverride(`MethodResponses.0.ResponseParameters.${parameter}`, true);
  }
}
