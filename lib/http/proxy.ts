/** The API Gateway proxy shapes every part of the pipeline speaks. */
import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';

export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
export type ProxyRequest = Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>;
export type ProxyMiddleware = MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>;
