/**
 * The answers API Gateway makes by itself (AWS, "Gateway response types for API Gateway",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html):
 * each response type's default status and `x-amzn-ErrorType`, shaped by the template's
 * AWS::ApiGateway::GatewayResponse of that type (or its DEFAULT_4XX/DEFAULT_5XX): status, header
 * mappings and body templates.
 */
import type { Refusal } from './authorizers.ts';
import { contextVariables, mappedAnswer, templateVariables } from './mappingTemplates.ts';
import {
  optionalString,
  stringRecord,
  type Answer,
  type Exchange,
  type Field,
  type GatewayResponseDefinition,
  type RestApi,
  type TemplateResource,
} from './restApiModel.ts';

/** The template's gateway responses of the API, by response type. */
export function readGatewayResponses(
  entries: [string, TemplateResource][],
  field: Field,
): Map<string, GatewayResponseDefinition> {
  return new Map(
    entries.map(([, resource]) => [
      String(field(resource, 'ResponseType')),
      {
        statusCode: optionalString(field(resource, 'StatusCode')),
        responseParameters: stringRecord(field(resource, 'ResponseParameters')),
        responseTemplates: stringRecord(field(resource, 'ResponseTemplates')),
      },
    ]),
  );
}

export type ResponseType =
  | Refusal['type']
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'THROTTLED'
  | 'REQUEST_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'INTEGRATION_FAILURE'
  | 'INTEGRATION_TIMEOUT'
  | 'API_CONFIGURATION_ERROR'
  | 'DEFAULT_5XX';

/** API Gateway's own status for each type, when the template does not set one. */
const DEFAULT_STATUS: Record<ResponseType, number> = {
  UNAUTHORIZED: 401,
  ACCESS_DENIED: 403,
  AUTHORIZER_FAILURE: 500,
  AUTHORIZER_CONFIGURATION_ERROR: 500,
  INVALID_API_KEY: 403,
  QUOTA_EXCEEDED: 429,
  MISSING_AUTHENTICATION_TOKEN: 403,
  THROTTLED: 429,
  REQUEST_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INTEGRATION_FAILURE: 504,
  INTEGRATION_TIMEOUT: 504,
  API_CONFIGURATION_ERROR: 500,
  DEFAULT_5XX: 500,
};

/** The `x-amzn-ErrorType` API Gateway sends with the answers it makes itself. */
const ERROR_TYPES: Partial<Record<ResponseType, string>> = {
  UNAUTHORIZED: 'UnauthorizedException',
  ACCESS_DENIED: 'AccessDeniedException',
  QUOTA_EXCEEDED: 'LimitExceededException',
  MISSING_AUTHENTICATION_TOKEN: 'MissingAuthenticationTokenException',
  THROTTLED: 'TooManyRequestsException',
  INTEGRATION_FAILURE: 'InternalServerErrorException',
  INTEGRATION_TIMEOUT: 'InternalServerErrorException',
  API_CONFIGURATION_ERROR: 'InternalServerErrorException',
  DEFAULT_5XX: 'InternalServerErrorException',
};

const BUILT_IN_TEMPLATE = '{"message":$context.error.messageString}';

/**
 * Gateway responses a template cannot change: "Customizing the default gateway response for 413
 * REQUEST_TOO_LARGE isn't currently supported" (API Gateway, "Amazon API Gateway important notes for
 * REST APIs", https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-known-issues.html).
 */
const UNCUSTOMIZABLE: ReadonlySet<ResponseType> = new Set(['REQUEST_TOO_LARGE']);

/**
 * The template's gateway response of this type, else its DEFAULT_4XX/DEFAULT_5XX, else API
 * Gateway's built-in one. The status: the response's own, else what the situation gives
 * (`observedStatus`, e.g. 502 for a function error), else the type's default.
 */
export function gatewayResponse(
  type: ResponseType,
  message: string,
  exchange: Exchange,
  api: RestApi,
  observedStatus?: number,
): Answer {
  const defaultStatus = observedStatus ?? DEFAULT_STATUS[type];
  const definition = UNCUSTOMIZABLE.has(type)
    ? undefined
    : (api.gatewayResponses.get(type) ??
      api.gatewayResponses.get(defaultStatus >= 500 ? 'DEFAULT_5XX' : 'DEFAULT_4XX'));
  const status = definition?.statusCode ? Number(definition.statusCode) : defaultStatus;
  const error = { message, messageString: JSON.stringify(message), responseType: type };
  const variables = templateVariables(exchange, api, { ...contextVariables(exchange, api), error });
  const templates =
    definition && Object.keys(definition.responseTemplates).length
      ? definition.responseTemplates
      : { 'application/json': BUILT_IN_TEMPLATE };
  const errorType = ERROR_TYPES[type];
  const answer = mappedAnswer(
    status,
    { responseParameters: definition?.responseParameters ?? {}, responseTemplates: templates },
    'gatewayresponse.header',
    exchange,
    api,
    variables,
    errorType ? [['x-amzn-ErrorType', errorType]] : [],
  );
  return { ...answer, error: { responseType: type, message } };
}
