/**
 * The MOCK integration of a REST API: the request template for the request's Content-Type (or the
 * passthrough behavior when there is none) gives the status, the integration response selected by
 * it gives the answer, with its header mappings and its response template for the Accept type.
 */
import { gatewayResponse } from './gatewayResponses.ts';
import { mappingValue, requestInput, selectTemplate, templateVariables } from './mappingTemplates.ts';
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

export function mockAnswer(integration: Extract<Integration, { type: 'MOCK' }>, exchange: Exchange, api: RestApi, log: (line: string) => void): Answer {
  const contentType = mediaType(requestHeader(exchange, 'content-type')) ?? 'application/json';
  const template = integration.requestTemplates[contentType];
  const templates = Object.keys(integration.requestTemplates).length;
  const refuse =
    template === undefined &&
    (integration.passthroughBehavior === 'NEVER' || (integration.passthroughBehavior === 'WHEN_NO_TEMPLATES' && templates > 0));
  if (refuse) return gatewayResponse('UNSUPPORTED_MEDIA_TYPE', 'Unsupported Media Type', exchange, api);
  const requestBody = template === undefined ? exchange.body.toString('utf8') : renderTemplate(template, templateVariables(exchange, api));
  const statusCode = mockStatus(requestBody);
  if (statusCode === undefined) {
    log(`(${exchange.requestId}) Execution failed due to configuration error: Unable to parse statusCode from the mock request template`);
    return gatewayResponse('API_CONFIGURATION_ERROR', 'Internal server error', exchange, api);
  }
  const response = selectIntegrationResponse(integration.responses, String(statusCode));
  if (!response) {
    log(`(${exchange.requestId}) Execution failed due to configuration error: No match for output mapping and no default output mapping configured`);
    return gatewayResponse('API_CONFIGURATION_ERROR', 'Internal server error', exchange, api);
  }
  const variables = { ...templateVariables(exchange, api), input: { ...requestInput(exchange), body: '' } };
  const selected = selectTemplate(response.responseTemplates, requestHeader(exchange, 'accept'));
  const headers = new Map<string, [string, string]>();
  if (selected) headers.set('content-type', ['Content-Type', selected.mediaType]);
  else headers.set('content-type', ['Content-Type', 'application/json']);
  for (const [target, source] of Object.entries(response.responseParameters)) {
    const name = /^method\.response\.header\.(.+)$/.exec(target)?.[1];
    const value = name && mappingValue(source, exchange, api);
    if (name && value !== undefined) headers.set(name.toLowerCase(), [name, value]);
  }
  return {
    status: Number(response.statusCode),
    headers: [...headers.values()],
    body: Buffer.from(selected ? renderTemplate(selected.template, variables) : '', 'utf8'),
  };
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
    responses.find((response) => response.selectionPattern && new RegExp(`^(?:${response.selectionPattern})$`, 's').test(status)) ??
    responses.find((response) => !response.selectionPattern)
  );
}
