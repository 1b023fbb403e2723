/**
 * The floor for cold start: a handler that only sends one GetCommand through DynamoDBDocumentClient.
 * `npm run bench` and the bundle-contents test build it twice in the same run (tools/bench/bundles.ts):
 * the usual way, with the SDK as published (the default floor, which the targets are ratios to),
 * and with the functions' own esbuild options (the Lambda floor), and compare every function with both.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';

const documents = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    region: process.env.AWS_REGION,
    ...(process.env.DYNAMODB_ENDPOINT ? { endpoint: process.env.DYNAMODB_ENDPOINT } : {}),
  }),
);

export const handler = async (event: { id: number }) =>
  (await documents.send(new GetCommand({ TableName: process.env.TABLE_NAME ?? 'pets', Key: { id: event.id } }))).Item;
