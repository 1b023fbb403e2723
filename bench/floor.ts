/**
 * The floor for cold start: a handler that only sends one GetCommand through DynamoDBDocumentClient.
 * `npm run bench` and the bundle test build it with the functions' own esbuild options, in the
 * same run, and compare every function with it.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';

const documents = DynamoDBDocumentClient.from(
  new DynamoDBClient({ region: process.env.AWS_REGION, ...(process.env.DYNAMODB_ENDPOINT ? { endpoint: process.env.DYNAMODB_ENDPOINT } : {}) }),
);

export const handler = async (event: { id: number }) =>
  (await documents.send(new GetCommand({ TableName: process.env.TABLE_NAME ?? 'pets', Key: { id: event.id } }))).Item;
