/**
 * The MOCK integration of a REST API: the request template for the request's Content-Type (or the
 * passthrough behavior when there is none) gives the status, the integration response selected by
 * it gives the answer, with its header mappings and its response template for the Accept type.
 */
import { gatewayResponse } from './gatewayResponses.ts';
import { mappedAnswer, templateVariables } from './mappingTemplates.ts';
import {
  isRecord,
  mediaType,
  requestHeader,
  type Answer,
  type Exchange,
  type Integration,
  type IntegrationResponse,
  type RestApi,
} from './restApiModel.ts';
import { renderTemplate } from './velocity.ts';

export function mockAnswer(
  integration: Extract<Integration, { type: 'MOCK' }>,
  exchange: Exchange,
  api: RestApi,
  log: (line: string) => void,
): Answer {
  const contentType = mediaType(requestHeader(exchange, 'content-type')) ?? 'application/json';
  const template = integration.requestTemplates[contentType];
  const templates = Object.keys(integration.requestTemplates).length;
  const refuse =
    template === undefined &&
    (integration.passthroughBehavior === 'NEVER' ||
      (integration.passthroughBehavior === 'WHEN_NO_TEMPLATES' && templates > 0));
  if (refuse) return gatewayResponse('UNSUPPORTED_MEDIA_TYPE', 'Unsupported Media Type', exchange, api);
  const requestBody =
    template === undefined
      ? exchange.body.toString('utf8')
      : renderTemplate(template, templateVariables(exchange, api));
  const statusCode = mockStatus(requestBody);
  if (statusCode === undefined) {
    log(
      `(${exchange.requestId}) Execution failed due to configuration error: Unable to parse statusCode from the mock request template`,
    );
    return gatewayResponse('API_CONFIGURATION_ERROR', 'Internal server error', exchange, api);
  }
  const response = selectIntegrationResponse(integration.responses, String(statusCode));
  if (!response) {
    log(
      `(${exchange.requestId}) Execution failed due to configuration error: No match for output mapping and no default output mapping configured`,
    );
    return gatewayResponse('API_CONFIGURATION_ERROR', 'Internal server error', exchange, api);
  }
  // Fresh variables: the request template's `#set($context.…)` writes into the ones it was given.
  const variables = templateVariables(exchange, api);
  return mappedAnswer(Number(response.statusCode), response, 'method.response.header', exchange, api, {
    ...variables,
    input: { ...variables.input, body: '' },
  });
}

function mockStatus(rendered: string): number | undefined {
  if (rendered.trim() === '') return 200;
  try {
    const parsed = JSON.parse(rendered) as unknown;
    const status = isRecord(parsed) ? Number(parsed.statusCode ?? 200) : NaN;
    return Number.isInteger(status) ? status : undefined;
  } catch {
    return undefined;
  }
}

/** The response whose SelectionPattern matches the whole status, else the one without a pattern. */
function selectIntegrationResponse(responses: IntegrationResponse[], status: string): IntegrationResponse | undefined {
  return (
    responses.find(
      (response) => response.selectionPattern && new RegExp(`^(?:${response.selectionPattern})$`, 's').test(status),
    ) ?? responses.find((response) => !response.selectionPattern)
  );
}
